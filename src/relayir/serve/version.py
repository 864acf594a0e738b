"""One loaded version of a model: its compiled files (one per batch size), the instances
that run them in worker threads, the input checks, and the count of requests in flight.

A version file set is loaded and warmed up (every instance runs once) in a worker thread
before the server switches to it, so the first request pays no first-run cost. A version
holds ``instances`` executor states over each loaded file (``CompiledModel.instance``),
each owned by one worker thread (``workers.py``): ctypes releases the GIL while a kernel
runs, so the instances compute in parallel.

Batch sizes: a file whose inputs' first dim is symbolic (a VM artifact) serves any
number of rows; files compiled at fixed sizes serve a batch at the smallest size that
holds it, padded with zeros, the padding's rows dropped from the outputs.
"""

from __future__ import annotations

import asyncio
import os
import time

import numpy as np

from ..errors import Error
from ..runtime import CompiledModel, TensorSpec
from ..runtime import load as load_artifact
from .errors import BadRequest, ServeError
from .protocol import datatype
from .repository import ModelConfig, VersionFiles
from .workers import InlineWorker, Workers

DYNAMIC = 0  # the batch-size key of a model whose first dim is symbolic


class LoadFailed(ServeError):
    """A version whose files cannot be loaded, do not agree, or fail their warm-up run."""


class ModelVersion:
    """See the module docstring. ``state`` is ``LOADING``, ``READY``, ``UNAVAILABLE``
    (``error`` says why) or ``UNLOADED``."""

    def __init__(self, name: str, files: VersionFiles, config: ModelConfig):
        self.name = name
        self.number = files.version
        self.files = files
        self.config = config
        self.state = "LOADING"
        self.error = ""
        self.models: dict[int, CompiledModel] = {}  # batch size (DYNAMIC) -> model
        self.in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self.workers: Workers | InlineWorker | None = None
        self.inline = False  # runs on the event loop's thread (see _load)
        self.threads = 1  # kernel threads per instance (see _load)
        self.label = str(self.number)  # the version as the protocol writes it
        self.load_seconds = 0.0

    # ------------------------------------------------------------ loading

    def load(self) -> None:
        """Open, check and warm up every file (in a worker thread); on failure ``state``
        is ``UNAVAILABLE`` and ``error`` the reason, and nothing is kept."""
        start = time.perf_counter()
        try:
            self._load()
        except Exception as exc:  # any failure of a user's file is reported, not raised
            self.models.clear()
            self.state, self.error = "UNAVAILABLE", f"{type(exc).__name__}: {exc}"
            return
        self.load_seconds = time.perf_counter() - start
        self.state = "READY"

    def _load(self) -> None:
        base = None
        for path in self.files.files:
            model = load_artifact(path)
            size = _batch_dim(model)
            if base is None:
                base = model
            elif [(s.name, s.dtype) for s in model.input_info] != \
                    [(s.name, s.dtype) for s in base.input_info]:
                raise LoadFailed(f"{path.name}: its inputs differ from those of "
                                 f"{self.files.files[0].name}")
            if self.config.max_batch_size and size is None:
                raise LoadFailed(f"{path.name}: max_batch_size is set, but the inputs do not "
                                 f"all share a first (batch) dim")
            self.models[size if size is not None else -len(self.models) - 1] = model
        self.base = base
        n = self.config.instances
        sets = [{k: m if i == 0 else m.instance() for k, m in self.models.items()}
                for i in range(n)]
        for instance in sets:
            for size, model in instance.items():
                _warm_up(model, size)
        # per request: the checks' facts, read once here
        self._checks = [(s.name, np.dtype(s.dtype), tuple(self.metadata_shape(s)))
                        for s in base.input_info]
        self.output_names = [s.name for s in base.output_info]
        # a model that runs in less time than a hop to a worker thread and back costs
        # (tens of us, far more when the cores are busy) runs on the event loop's thread
        # instead; ``instances`` > 1 asks for threads, and gets them. Only with static
        # shapes (the batch dim aside): a request cannot then run longer than measured
        limit = self.config.inline_below_us * 1e-6
        static = all(isinstance(d, int) for s in base.input_info
                     for d in (s.shape[1:] if self.batching else s.shape))
        self.inline = n == 1 and limit > 0 and static and \
            _fastest_run(*self._largest_run()) < limit
        # kernel threads per instance: one inline (a team's wake-up and join cost a tiny
        # model more than it gains, and the loop's thread has protocol work too), else
        # the cores shared between the instances
        self.threads = self.config.threads or (1 if self.inline else max(1, _cores() // n))
        self.workers = InlineWorker(sets[0], self.threads) if self.inline else \
            Workers(sets, f"relayir-{self.name}-{self.number}", self.threads)

    def _largest_run(self) -> tuple[CompiledModel, int]:
        """The model file and batch size of the longest run a request or batch makes."""
        if not self.batching:
            key = next(iter(self.models))
            return self.models[key], max(key, 1)
        if DYNAMIC in self.models:
            return self.models[DYNAMIC], self.max_rows
        size = min(s for s in self.models if s >= self.max_rows)
        return self.models[size], size

    # ------------------------------------------------------------ describing

    @property
    def batching(self) -> bool:
        return self.config.max_batch_size > 0

    @property
    def max_rows(self) -> int:
        """The most rows one batch may hold."""
        if DYNAMIC in self.models:
            return self.config.max_batch_size
        return min(self.config.max_batch_size, max(self.models))

    def inputs(self) -> list[TensorSpec]:
        return self.base.input_info

    def outputs(self) -> list[TensorSpec]:
        return self.base.output_info

    def metadata_shape(self, spec: TensorSpec) -> list[int]:
        """The protocol's shape: -1 for a symbolic dim, and for the batch dim when batching."""
        dims = [d if isinstance(d, int) else -1 for d in spec.shape]
        if self.batching and dims:
            dims[0] = -1
        return dims

    # ------------------------------------------------------------ requests

    def check(self, inputs: dict[str, np.ndarray]) -> tuple[list[np.ndarray], int]:
        """The inputs in order and their number of rows (1 without batching); a
        ``BadRequest`` naming the input otherwise."""
        checks = self._checks
        if len(inputs) != len(checks) or any(c[0] not in inputs for c in checks):
            names = [c[0] for c in checks]
            unknown = [k for k in inputs if k not in names]
            if unknown:
                raise BadRequest(f"model {self.name!r} has no input named "
                                 f"{', '.join(map(repr, unknown))}; its inputs are "
                                 f"{', '.join(names)}")
            missing = [n for n in names if n not in inputs]
            raise BadRequest(f"model {self.name!r}: missing input {', '.join(missing)}")
        arrays, rows = [], None
        for name, dtype, shape in checks:
            a = inputs[name]
            if a.dtype != dtype:
                raise BadRequest(f"input {name!r}: datatype {datatype(dtype)} expected, "
                                 f"found {datatype(a.dtype)}")
            if a.shape != shape and (len(a.shape) != len(shape) or any(
                    d != -1 and d != s for d, s in zip(shape, a.shape))):
                raise BadRequest(f"input {name!r}: shape {list(shape)} expected, found "
                                 f"{list(a.shape)}")
            if self.batching:
                if rows is not None and a.shape[0] != rows:
                    raise BadRequest(f"input {name!r}: {a.shape[0]} rows, the other "
                                     f"inputs have {rows}")
                rows = a.shape[0]
            arrays.append(a)
        rows = rows if rows is not None else 1
        if self.batching and not 1 <= rows <= self.max_rows:
            raise BadRequest(f"model {self.name!r} takes 1 to {self.max_rows} rows per "
                             f"request, found {rows}")
        return arrays, rows

    async def execute(self, arrays: list[np.ndarray], rows: int) -> list[np.ndarray]:
        """``run`` on a worker thread (off the event loop), or on the loop's thread for
        a model faster than ``inline_below_us`` (``inline``)."""
        return await self.workers.call(self.run, arrays, rows)

    def run(self, arrays: list[np.ndarray], rows: int) -> list[np.ndarray]:
        """Run on the calling worker's instance: the outputs, ``rows`` rows each when
        batching."""
        instance = self.workers.instance()
        if not self.batching:
            return instance[next(iter(instance))].run(arrays)
        if DYNAMIC in instance:
            size, outputs = rows, instance[DYNAMIC].run(arrays)
        else:
            size = min(s for s in instance if s >= rows)
            if size > rows:
                arrays = [np.concatenate([a, np.zeros((size - rows, *a.shape[1:]), a.dtype)])
                          for a in arrays]
            outputs = instance[size].run(arrays)
        for i, o in enumerate(outputs):
            if not o.shape or o.shape[0] != size:
                raise ServeError(f"model {self.name!r}: output {i} has shape {list(o.shape)}, "
                                 f"no batch dim of {size} to split between requests; set "
                                 f"max_batch_size 0")
        return [o[:rows] for o in outputs]

    # ------------------------------------------------------------ in flight

    def enter(self) -> None:
        self.in_flight += 1
        self._idle.clear()

    def leave(self) -> None:
        self.in_flight -= 1
        if self.in_flight == 0:
            self._idle.set()

    async def drain_and_close(self) -> None:
        """Wait for the requests in flight (they finish on this version), then free it."""
        await self._idle.wait()
        self.state = "UNLOADED"
        if self.workers is not None:
            self.workers.close()
        self.models.clear()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _batch_dim(model: CompiledModel) -> int | None:
    """The shared first dim of every input: an int, ``DYNAMIC`` when symbolic, None when
    the inputs share none."""
    firsts = {s.shape[0] if s.shape else None for s in model.input_info}
    if len(firsts) != 1 or None in firsts:
        return None
    (first,) = firsts
    return first if isinstance(first, int) else DYNAMIC


def _fastest_run(model: CompiledModel, batch: int, runs: int = 20) -> float:
    """The fastest of some runs, in seconds (stopping early for a slow model): the first
    runs after loading are several times slower than the rest."""
    inputs = model.sample_inputs(batch)
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        model.run(inputs)
        best = min(best, time.perf_counter() - start)
        if best > 0.01:
            break
    return best


def _warm_up(model: CompiledModel, size: int) -> None:
    """One run on zeros (two batch sizes for a dynamic model: its output shapes are learnt
    from runs); a model that cannot run is a load failure, not a failed first request."""
    try:
        for batch in ((1, 2) if size == DYNAMIC else (max(size, 1),)):
            model.run(model.sample_inputs(batch))
    except Error as exc:
        raise LoadFailed(f"the warm-up run failed: {exc}") from None


__all__ = ["DYNAMIC", "LoadFailed", "ModelVersion"]
