"""Build candidates and measure them, each in its own worker process.

``build_job(task, space, configs)`` lowers every config of a batch and renders them
into ONE C translation unit (a ``Job``: plain strings and arrays, so it can travel to
another machine). ``run_job(job, options)`` compiles it (a batch that fails to compile
is compiled candidate by candidate, so one bad candidate costs only itself) and measures
each kernel in a fresh process forked from a clean server process: a candidate that
crashes, hangs past ``options.timeout`` or computes a wrong result (checked against the
task's numpy reference on the first run) is a ``MeasureResult`` with an ``error``, and
the tuner goes on. Timing (``worker.py``) follows ``time_evaluator``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..codegen.c_printer import render_module
from ..codegen.compiler import compile_source
from ..errors import Error
from ..runtime.numpy_kernels import NumpyKernel
from ..tir import lower_primitive
from .space import ConfigSpace
from .task import Task, host_cpu, random_inputs
from .worker import MeasureOptions, MeasureResult, WorkerServer


@dataclasses.dataclass
class Job:
    """One batch of candidates of one task, ready to compile and run anywhere:
    ``source`` (all kernels in one translation unit), ``sources`` (each alone: the
    fallback when the batch fails to compile), kernel ``names``, the task's ``inputs``,
    the reference outputs (``expected``) and ``outputs`` (shape, dtype) to allocate;
    ``reference``: the kernel of the default schedule, in every source, timed in
    alternation with each candidate (``worker.py``); ``cflags``: the C compiler flags of
    the task's target (its ``-march``; ``None``: the defaults)."""

    task: str
    source: str
    sources: list[str]
    names: list[str]
    inputs: list[np.ndarray]
    expected: list[np.ndarray] | None
    outputs: list[tuple[tuple[int, ...], str]]
    reference: str | None = None
    cflags: list[str] | None = None


class TaskData:
    """A task's inputs and reference outputs, made once per task (the reference is the
    numpy target: the semantic reference every kernel is tested against)."""

    def __init__(self, task: Task, seed: int = 0):
        kernel = NumpyKernel(task.name, task.func)
        self.inputs = random_inputs(kernel.input_types, seed)
        self.outputs = [(tuple(int(d) for d in t.shape), t.dtype) for t in kernel.output_types]
        self._kernel = kernel
        self._expected: list | None = None

    @property
    def expected(self) -> list[np.ndarray]:
        if self._expected is None:
            self._expected = [np.ascontiguousarray(x)
                              for x in self._kernel.evaluate(*self.inputs)]
        return self._expected


@dataclasses.dataclass
class Built:
    """Lowering's outcome for one config: its kernel's name, or why it has none."""

    config: dict
    name: str | None
    error: str | None = None
    kernel: object = None  # the lowered PrimFunc (the model tuner's features)


def build_job(task: Task, space: ConfigSpace, configs: list[dict], data: TaskData,
              prefix: str = "cand", check: bool = True, reference: bool = True
              ) -> tuple[list[Built], Job | None]:
    """Lower each config (a lowering error is that candidate's result) and render the
    rest into one ``Job``, with the default schedule's kernel as the reference."""
    built, kernels = [], []
    for i, config in enumerate(configs):
        name = f"{prefix}_{i}"
        try:
            kernel = lower_primitive(task.func, name, space.schedule(config))
        except Exception as exc:  # noqa: BLE001  (any failure is this candidate's error)
            built.append(Built(config, None, f"lowering: {type(exc).__name__}: {exc}"))
            continue
        built.append(Built(config, name, kernel=kernel))
        kernels.append(kernel)
    if not kernels:
        return built, None
    ref = [lower_primitive(task.func, f"{prefix}_ref", space.schedule(space.default_config))
           ] if reference else []
    job = Job(task.workload, render_module(kernels + ref),
              [render_module([k, *ref]) for k in kernels], [k.name for k in kernels],
              data.inputs, data.expected if check else None, data.outputs,
              ref[0].name if ref else None, task.target.cflags())
    return built, job


def run_job(job: Job, options: MeasureOptions, server: WorkerServer | None = None
            ) -> list[MeasureResult]:
    """Compile ``job`` and measure its kernels one after another, each in a fresh
    process forked by ``server`` (one is started for the job when none is given); one
    result per kernel, in ``job.names`` order."""
    own = server is None
    server = server or WorkerServer()
    try:
        return _run_job(job, options, server)
    finally:
        if own:
            server.close()


def _run_job(job: Job, options: MeasureOptions, server: WorkerServer) -> list[MeasureResult]:
    try:
        paths = [compile_source(job.source, flags=job.cflags, name="tune")] * len(job.names)
    except Error:
        paths = []
        for source in job.sources:  # find the candidate(s) the compiler refuses
            try:
                paths.append(compile_source(source, flags=job.cflags, name="tune"))
            except Error as exc:
                paths.append(_Failed(f"compile: {str(exc).splitlines()[0]}"))
    return [MeasureResult(error=p.error, cpu=host_cpu()) if isinstance(p, _Failed)
            else server.measure(str(p), name, job, options)
            for p, name in zip(paths, job.names)]


@dataclasses.dataclass
class _Failed:
    error: str


__all__ = ["Built", "Job", "MeasureOptions", "MeasureResult", "TaskData", "build_job",
           "run_job"]
