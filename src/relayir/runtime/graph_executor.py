"""The graph executor (Relay's ``graph_executor.GraphModule``).

Set-up does all the work a run could repeat: it reads the graph JSON, allocates one
64-byte-aligned buffer per storage id of the memory plan (storage 0 is the arena all
intermediates share), makes every tensor of the graph a view at its ``storage_offset``
into its storage (offset 0 when the graph has none), copies the params in, and binds
each node's kernel to its argument views (``Kernel.bind``: checked once, here).
``run()`` is then a loop over those pre-bound callables: no dictionary lookups,
allocation or checks per kernel.

Inputs are copied into their storage by ``set_input``, which checks the name, dtype and
shape first, so a kernel only ever sees the shapes it was built for; the per-call path
of ``relayir.runtime`` (``run_checked``) reads a large input from the caller's array
instead, re-pointing the C kernels that read it (``IN_PLACE_BYTES``). ``get_output``
returns a copy (the storage is reused by the next run); before a run has completed
(none yet, or the last one failed) there is no output to return, and it says so
rather than hand back uninitialised memory.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass

import numpy as np

from ..errors import Error
from .graph_json import check_graph
from .memory_plan import ALIGNMENT, plan_memory, storage_offsets
from .params import load_params
from .tensors import aligned_empty, check_input

# inputs at least this large are read from the caller's array by ``run_checked``: their
# copy (~10 GB/s) costs more than re-pointing their readers
IN_PLACE_BYTES = 64 * 1024


class GraphExecutorError(Error):
    """A wrong input (name, dtype, shape), a graph that does not fit its kernels, or a
    failing kernel."""


class GraphModule:
    """Runs a module built by ``relayir.build`` (or loaded by ``load_module``)."""

    def __init__(self, module, device=None):
        if isinstance(module, GraphModule):
            module = module.module
        self.module = module
        graph = getattr(module, "graph", None)
        if not isinstance(graph, dict):
            try:
                graph = json.loads(module.get_graph_json())
            except ValueError as exc:
                raise GraphExecutorError(f"the graph JSON is not JSON: {exc}") from None
        check_graph(graph, GraphExecutorError)
        self.graph = graph
        self._setup(self.graph, module.get_lib())
        self.load_params(module.get_params())

    # ------------------------------------------------------------ set-up

    def _setup(self, graph: dict, lib) -> None:
        nodes = graph["nodes"]  # check_graph has checked every field read here
        row_ptr = graph["node_row_ptr"]
        attrs = graph["attrs"]
        shapes = [tuple(s) for s in attrs["shape"][1]]
        dtypes = list(attrs["dltype"][1])
        heads = graph["heads"]
        if "storage_id" in attrs:
            sids = list(attrs["storage_id"][1])
            offsets = storage_offsets(graph)
        else:  # a graph without a memory plan gets one here
            plan = plan_memory(graph)
            sids, offsets = list(plan.storage_ids), list(plan.storage_offsets)
        nbytes = [int(np.prod(s, dtype=np.int64)) * np.dtype(d).itemsize
                  for s, d in zip(shapes, dtypes)]
        sizes = [0] * (max(sids, default=-1) + 1)
        for eid, sid in enumerate(sids):
            if offsets[eid] % ALIGNMENT:
                raise GraphExecutorError(
                    f"entry {eid}: storage offset {offsets[eid]} is not a multiple of "
                    f"{ALIGNMENT}")
            sizes[sid] = max(sizes[sid], offsets[eid] + nbytes[eid])
        self._storage = [aligned_empty(n) for n in sizes]
        self._views = [
            self._storage[sid][off: off + n].view(d).reshape(s)
            for sid, off, n, s, d in zip(sids, offsets, nbytes, shapes, dtypes)]
        params = set(self.module.get_params())
        self._args: dict[str, int] = {}  # every null node's name → entry id
        self._input_names: list[str] = []  # the ones that are not params, in order
        calls, names = [], []
        readers: dict[int, list] = {}  # entry id → (call index, argument slot) reading it
        for nid, node in enumerate(nodes):
            if node["op"] == "null":
                self._args[node["name"]] = row_ptr[nid]
                if node["name"] not in params:
                    self._input_names.append(node["name"])
                continue
            for slot, (src, i, _) in enumerate(node["inputs"]):
                readers.setdefault(row_ptr[src] + i, []).append((len(calls), slot))
            func_name = node["attrs"]["func_name"]
            try:
                kernel = lib[func_name]
            except Error as exc:
                raise GraphExecutorError(f"node {nid}: {exc}") from None
            arrays = [self._views[row_ptr[src] + i] for src, i, _ in node["inputs"]]
            arrays += self._views[row_ptr[nid]: row_ptr[nid + 1]]
            try:
                calls.append(kernel.bind(arrays))
            except Error as exc:
                raise GraphExecutorError(f"node {nid} ({func_name}): {exc}") from None
            names.append(func_name)
        self._calls = tuple(calls)
        self._call_names = tuple(names)
        self._outputs = [row_ptr[nid] + i for nid, i, _ in heads]
        self._output_names = list(graph.get("output_names") or ())
        self._unset = set(self._input_names)
        self._ran = False  # a run completed since set-up: the outputs hold its results
        self._in_place = self._in_place_slots(readers, sids)
        self._bound: dict[str, np.ndarray] = {}  # inputs read from the caller's array

    def _in_place_slots(self, readers: dict, sids: list) -> dict[str, tuple]:
        """The inputs ``run_checked`` may read from the caller's array instead of a copy:
        large ones (the copy costs more than re-pointing the kernels that read it, ~0.2 us
        each) read only by C kernels, owning their storage, not an output. ``{name:
        (the readers' (pointer array, slot) pairs, the input's own buffer address)}``."""
        out = {}
        for name in self._input_names:
            eid = self._args[name]
            view = self._views[eid]
            if view.nbytes < IN_PLACE_BYTES or eid in self._outputs or (
                    sids.count(sids[eid]) != 1):
                continue
            slots = [(getattr(self._calls[c], "pointers", None), k)
                     for c, k in readers.get(eid, [])]
            if slots and all(p is not None for p, _ in slots):
                out[name] = (tuple(slots), view.ctypes.data)
        return out

    def _point(self, name: str, array: np.ndarray | None) -> None:
        """Let the kernels that read input ``name`` read ``array`` (None: its buffer)."""
        slots, own = self._in_place[name]
        address = own if array is None else array.ctypes.data
        for pointers, k in slots:
            pointers[k] = address
        if array is None:
            del self._bound[name]
        else:
            self._bound[name] = array  # alive while the kernels point at it

    # ------------------------------------------------------------ inputs

    def _entry(self, key) -> tuple[str, int]:
        names = list(self._args)
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not 0 <= key < len(names):
                raise GraphExecutorError(
                    f"input index {key} is out of range: the graph has {len(names)} inputs "
                    f"and params ({', '.join(names[:8])}{', ...' if len(names) > 8 else ''})")
            key = names[key]
        if key not in self._args:
            raise GraphExecutorError(
                f"the graph has no input named {key!r}; its inputs are "
                f"{', '.join(self._input_names) or 'none'}")
        return key, self._args[key]

    def set_input(self, key=None, value=None, **params) -> None:
        """``set_input("data", x)``, ``set_input(0, x)`` or ``set_input(data=x, ...)``."""
        if key is not None:
            self._set(key, value)
        for k, v in params.items():
            self._set(k, v)

    def _set(self, key, value) -> None:
        name, eid = self._entry(key)
        dst = self._views[eid]
        value = check_input(repr(name), value, dst.dtype.name, dst.shape, GraphExecutorError)
        if name in self._bound:
            self._point(name, None)
        np.copyto(dst, value)
        self._unset.discard(name)

    def load_params(self, params) -> None:
        """Set params (and inputs) by name from a dict or ``.npz`` bytes."""
        if isinstance(params, (bytes, bytearray)):
            params = load_params(params)
        for name, value in params.items():
            self._set(name, value)

    def get_input(self, key) -> np.ndarray:
        name, eid = self._entry(key)
        return (self._bound[name] if name in self._bound else self._views[eid]).copy()

    def get_num_inputs(self) -> int:
        """The number of inputs the caller sets (params excluded)."""
        return len(self._input_names)

    def get_input_index(self, name: str) -> int:
        return list(self._args).index(self._entry(name)[0])

    def get_input_info(self) -> tuple[dict[str, tuple], dict[str, str]]:
        """``(shape_dict, dtype_dict)`` of the inputs (params excluded), as in TVM."""
        shapes = {n: self._views[self._args[n]].shape for n in self._input_names}
        dtypes = {n: self._views[self._args[n]].dtype.name for n in self._input_names}
        return shapes, dtypes

    # ------------------------------------------------------------ running

    def run(self, **inputs) -> None:
        for k, v in inputs.items():
            self._set(k, v)
        if self._unset:
            missing = ", ".join(n for n in self._input_names if n in self._unset)
            raise GraphExecutorError(f"inputs not set: {missing}; call set_input first")
        self._execute()

    def run_checked(self, arrays) -> list[np.ndarray]:
        """Take ``arrays`` (the inputs in ``get_input_info`` order, their dtypes and
        shapes already checked by the caller: ``CompiledModel.check_inputs``), run, and
        return copies of the outputs: the per-call path of ``relayir.runtime``'s models,
        without checking every input a second time. A large C-contiguous input is read
        where it is (the kernels re-pointed at it: no copy; no kernel assumes more
        alignment than the element's), others are copied in."""
        views, in_place = self._views, self._in_place
        for name, a in zip(self._input_names, arrays):
            if name in in_place and a.flags.c_contiguous and a.flags.aligned:
                self._point(name, a)
                continue
            if name in self._bound:
                self._point(name, None)
            np.copyto(views[self._args[name]], a)
        self._unset.clear()
        self._execute()
        return [views[e].copy() for e in self._outputs]

    def _execute(self) -> None:
        self._ran = False
        f = None
        try:  # free in CPython 3.11 unless something raises
            for f in self._calls:
                if f():
                    self._failed(f)
        except GraphExecutorError:
            raise
        except Exception as exc:
            self._failed(f, exc)
        self._ran = True

    def _failed(self, f, exc: Exception | None = None) -> None:
        i = self._calls.index(f)
        what = f"failed: {type(exc).__name__}: {exc}" if exc is not None else "returned an error"
        raise GraphExecutorError(f"kernel {self._call_names[i]} (call {i}) {what}") from exc

    def get_num_outputs(self) -> int:
        return len(self._outputs)

    def get_output(self, index: int | str, out: np.ndarray | None = None) -> np.ndarray:
        """A copy of output ``index`` (into ``out`` when given); a name where the model
        names its outputs (an ONNX model's: ``get_output("prob")``)."""
        if isinstance(index, str):
            if index not in self._output_names:
                raise GraphExecutorError(
                    f"the graph has no output named {index!r}; its outputs are "
                    f"{', '.join(self._output_names) or 'unnamed (use an index)'}")
            index = self._output_names.index(index)
        if not 0 <= index < len(self._outputs):
            raise GraphExecutorError(
                f"output index {index} is out of range: the graph has {len(self._outputs)} "
                f"outputs")
        if not self._ran:
            raise GraphExecutorError(
                f"get_output({index}): no run has completed, so there is no output yet; "
                "call run() first")
        src = self._views[self._outputs[index]]
        if out is None:
            return src.copy()
        np.copyto(out, src)
        return out

    def get_outputs(self) -> list[np.ndarray]:
        return [self.get_output(i) for i in range(len(self._outputs))]

    # ------------------------------------------------------------ measuring

    def benchmark(self, number: int = 10, repeat: int = 3, min_repeat_ms: float = 0.0,
                  warmup: int = 1, **inputs) -> BenchmarkResult:
        """Time ``run()``: ``repeat`` measurements, each the mean of ``number`` runs; when
        a measurement takes less than ``min_repeat_ms``, ``number`` grows until it does
        not (TVM's ``time_evaluator``). Times are in milliseconds."""
        if number < 1 or repeat < 1:
            raise GraphExecutorError(f"number and repeat must be >= 1, found {number}, {repeat}")
        self.run(**inputs)
        for _ in range(warmup - 1):
            self.run()
        return time_runs(self._execute, number, repeat, min_repeat_ms)

    def profile(self, number: int = 1, **inputs) -> ProfileReport:
        """Run ``number`` times, timing every kernel call; totals per kernel name."""
        self.run(**inputs)  # warm-up and input check
        clock = time.perf_counter
        totals: dict[str, float] = {}
        counts: dict[str, int] = {}
        t_start = clock()
        for _ in range(number):
            for f, name in zip(self._calls, self._call_names):
                t0 = clock()
                if f():
                    self._failed(f)
                dt = clock() - t0
                totals[name] = totals.get(name, 0.0) + dt
                counts[name] = counts.get(name, 0) + 1
        wall = clock() - t_start
        return ProfileReport.make(totals, counts, wall * 1e3, number)


def time_runs(run, number: int, repeat: int, min_repeat_ms: float) -> BenchmarkResult:
    """``repeat`` timings of ``run()``, each the mean of ``number`` calls; ``number`` grows
    while a timing takes less than ``min_repeat_ms`` (TVM's ``time_evaluator``)."""
    clock = time.perf_counter
    results = []
    for _ in range(repeat):
        while True:
            t0 = clock()
            for _ in range(number):
                run()
            elapsed = clock() - t0
            if elapsed * 1e3 >= min_repeat_ms:
                break
            number = max(number + 1, int(number * min_repeat_ms / max(elapsed * 1e3, 1e-3)))
        results.append(elapsed * 1e3 / number)
    return BenchmarkResult(tuple(results), number)


@dataclass(frozen=True)
class BenchmarkResult:
    """Per-run times in milliseconds, one per repeat (each the mean of ``number`` runs)."""

    results: tuple[float, ...]
    number: int

    @property
    def mean(self) -> float:
        return statistics.fmean(self.results)

    @property
    def median(self) -> float:
        return statistics.median(self.results)

    @property
    def std(self) -> float:
        return statistics.pstdev(self.results) if len(self.results) > 1 else 0.0

    @property
    def min(self) -> float:
        return min(self.results)

    @property
    def max(self) -> float:
        return max(self.results)

    def __str__(self) -> str:
        head = (f"{'mean (ms)':>12}{'median (ms)':>14}{'max (ms)':>12}{'min (ms)':>12}"
                f"{'std (ms)':>12}")
        row = (f"{self.mean:>12.4f}{self.median:>14.4f}{self.max:>12.4f}{self.min:>12.4f}"
               f"{self.std:>12.4f}")
        return f"Execution time summary ({len(self.results)} x {self.number} runs):\n{head}\n{row}"


@dataclass(frozen=True)
class ProfileRow:
    name: str
    calls: int
    total_ms: float
    percent: float

    @property
    def mean_us(self) -> float:
        return 1e3 * self.total_ms / self.calls if self.calls else 0.0


@dataclass(frozen=True)
class ProfileReport:
    """Kernel time per kernel name, largest first; ``wall_ms`` includes the loop."""

    rows: tuple[ProfileRow, ...]
    wall_ms: float
    runs: int

    @staticmethod
    def make(totals: dict, counts: dict, wall_ms: float, runs: int) -> ProfileReport:
        kernel_ms = sum(totals.values()) * 1e3
        rows = sorted(
            (ProfileRow(n, counts[n], t * 1e3, 100 * t * 1e3 / kernel_ms if kernel_ms else 0.0)
             for n, t in totals.items()), key=lambda r: -r.total_ms)
        return ProfileReport(tuple(rows), wall_ms, runs)

    @property
    def total_ms(self) -> float:
        return sum(r.total_ms for r in self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def table(self, limit: int | None = None) -> str:
        rows = self.rows if limit is None else self.rows[:limit]
        width = max([len("kernel")] + [len(r.name) for r in rows])
        lines = [f"{'kernel':<{width}}  {'calls':>6}  {'total (ms)':>11}  {'mean (us)':>10}  "
                 f"{'%':>6}"]
        for r in rows:
            lines.append(f"{r.name:<{width}}  {r.calls:>6}  {r.total_ms:>11.3f}  "
                         f"{r.mean_us:>10.1f}  {r.percent:>6.1f}")
        if limit is not None and len(self.rows) > limit:
            lines.append(f"... {len(self.rows) - limit} more kernels")
        lines.append(f"{'total':<{width}}  {sum(r.calls for r in self.rows):>6}  "
                     f"{self.total_ms:>11.3f}  (wall {self.wall_ms:.3f} ms over {self.runs} runs)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


__all__ = ["BenchmarkResult", "GraphExecutorError", "GraphModule",
           "ProfileReport", "ProfileRow"]
