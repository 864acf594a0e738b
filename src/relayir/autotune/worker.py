"""Measuring candidates in worker processes that may crash, hang or be wrong.

``WorkerServer`` starts ``python -m relayir.autotune.worker``: a small server that
never runs a kernel itself. For each candidate it forks a child (a clean fork: the
server has no OpenMP threads, which a fork would leave broken), the child loads the
library, runs the kernel once, checks the outputs against the reference and times it,
and the server reports the child's costs, or why there are none: a signal (a crash), no
answer within the timeout (a hang: the child is killed), a wrong result, a failed call.
The tuner talks to the server over its stdin/stdout (pickled tuples between two
processes of this package; nothing is stored that way).

Timing follows ``time_evaluator``: ``repeat`` measurements of ``number`` runs each,
``number`` raised until one measurement takes ``min_repeat_ms``; ``flush_cache``
overwrites a buffer twice the L3 before each measurement. With a *reference* kernel
(the task's default schedule, compiled in the same library), each measurement of the
candidate follows one of the reference, back to back: on a shared machine the load
changes from one second to the next (the development machine, at load 6-10, timed the
same kernel anywhere between 0.25 and 15 ms over a minute), and a pair sees the same
load, so the ratio of the two's fastest measurements (``MeasureResult.relative``)
ranks candidates where absolute times cannot.
"""

from __future__ import annotations

import dataclasses
import math
import os
import pickle
import select
import signal
import subprocess
import sys
import time
import traceback

import numpy as np

from ..codegen.loader import SharedLibrary
from ..tir.machine import host_machine
from .task import host_cpu

_MAX_NUMBER = 100_000  # runs per measurement, whatever min_repeat_ms asks
_SERVER_GRACE = 10.0  # seconds the server may take beyond a candidate's timeout


@dataclasses.dataclass(frozen=True)
class MeasureOptions:
    """How a runner times a candidate (``time_evaluator``'s knobs) and how long it
    waits for one (``timeout``, seconds: loading, the checked first run and timing)."""

    number: int = 1
    repeat: int = 10
    min_repeat_ms: float = 10.0
    timeout: float = 30.0
    flush_cache: bool = False
    check: bool = True
    tolerance: float = 1e-3  # of the reference's largest magnitude


@dataclasses.dataclass(frozen=True)
class MeasureResult:
    """``costs``: seconds per run, one per measurement; ``error``: why there are none;
    ``cpu``: the CPU that measured (``task.host_cpu()`` of the worker)."""

    costs: tuple[float, ...] = ()
    error: str | None = None
    cpu: str = ""
    reference: tuple[float, ...] = ()  # the reference's costs, measured in alternation

    @property
    def cost(self) -> float:
        """The candidate's cost: its fastest measurement (``inf`` for an error). Each
        measurement already averages ``number`` runs over at least ``min_repeat_ms``;
        across measurements, other work on a shared machine only ever adds time — on the
        2-core development machine under load 6-10, a parallel kernel's measurements
        were bimodal (its OpenMP team whole, or run on one thread by the runtime's
        late-helper guard: 2x apart), so a median ranked candidates by the load of the
        moment, the fastest measurement by their own speed."""
        return min(self.costs) if self.costs and not self.error else math.inf

    @property
    def relative(self) -> float:
        """The candidate's cost over the reference's, each its fastest measurement of
        the same alternating window (``inf`` for an error; the plain ``cost`` without a
        reference)."""
        if self.error or not self.costs:
            return math.inf
        if not self.reference:
            return self.cost
        return min(self.costs) / min(self.reference)


class WorkerServer:
    """The tuner's end of a worker server process (started on first use)."""

    def __init__(self):
        self._proc: subprocess.Popen | None = None
        self._data_id: int | None = None

    def _start(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            self._data_id = None
        return self._proc

    def measure(self, path: str, name: str, job, options: MeasureOptions) -> MeasureResult:
        """Measure kernel ``name`` of the library at ``path`` on ``job``'s data."""
        proc = self._start()
        try:
            if self._data_id != id(job):
                _send(proc.stdin, ("data", job.inputs, job.expected, job.outputs))
                self._data_id = id(job)
            _send(proc.stdin, ("measure", path, name, job.reference, options))
            ready, _, _ = select.select([proc.stdout], [], [], options.timeout + _SERVER_GRACE)
            if not ready:
                raise TimeoutError
            status, value = pickle.load(proc.stdout)
        except (OSError, EOFError, TimeoutError, pickle.UnpicklingError):
            self.close()  # the server itself failed: the next candidate gets a new one
            return MeasureResult((), "worker server stopped answering", host_cpu())
        if status == "ok":
            costs, reference = value
            return MeasureResult(tuple(costs), None, host_cpu(), tuple(reference))
        return MeasureResult((), value, host_cpu())

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()

    def __del__(self):
        self.close()


def _send(stream, message) -> None:
    pickle.dump(message, stream, protocol=pickle.HIGHEST_PROTOCOL)
    stream.flush()


# ---------------------------------------------------------------- the server process


def serve(stdin, stdout) -> None:
    data = None
    while True:
        try:
            message = pickle.load(stdin)
        except EOFError:
            return
        if message[0] == "data":
            data = message[1:]
            continue
        _, path, name, reference, options = message
        _send(stdout, _forked(path, name, reference, data, options))


def _forked(path, name, reference, data, options: MeasureOptions) -> tuple:
    """Measure in a forked child: ``("ok", (costs, reference costs))`` or
    ``("error", why)``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: measure, answer, leave without running any cleanup
        os.close(read)
        try:
            answer = ("ok", _measure(path, name, reference, *data, options))
        except _Wrong as exc:
            answer = ("error", str(exc))
        except Exception as exc:  # noqa: BLE001  (this candidate's error, reported)
            answer = ("error", "run: " + traceback.format_exception_only(type(exc), exc)[-1]
                      .strip())
        payload = pickle.dumps(answer)
        while payload:
            payload = payload[os.write(write, payload):]
        os._exit(0)
    os.close(write)
    chunks, deadline, timed_out = [], time.monotonic() + options.timeout, False
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([read], [], [], max(left, 0))
        if not ready:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        chunk = os.read(read, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return ("error", f"timeout: no result within {options.timeout:g} s")
    if chunks:
        return pickle.loads(b"".join(chunks))
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return ("error", f"crashed: signal {sig} ({signal.Signals(sig).name})")
    return ("error", f"worker exited with status {os.WEXITSTATUS(status)}")


class _Wrong(Exception):
    pass


def _measure(path, name, reference, inputs, expected, outputs, options: MeasureOptions
             ) -> tuple[list[float], list[float]]:
    library = SharedLibrary(path)
    outs = [np.zeros(shape, dtype) for shape, dtype in outputs]
    call = library.kernel(name).bind([*inputs, *outs])
    call()  # the first run: warms up, and is the one checked
    if expected is not None:
        for k, (got, want) in enumerate(zip(outs, expected)):
            scale = float(np.max(np.abs(want))) if want.size else 0.0
            err = float(np.max(np.abs(got.astype("float64") - want))) if want.size else 0.0
            if not np.isfinite(err) or err > options.tolerance * max(scale, 1.0):
                raise _Wrong(f"wrong result: output {k} differs from the reference by "
                             f"{err:.3g} (largest magnitude {scale:.3g})")
    runs = [call.unchecked]
    if reference:
        ref = library.kernel(reference).bind([*inputs, *(np.zeros_like(o) for o in outs)])
        ref()
        runs.insert(0, ref.unchecked)  # the reference first in each pair
    numbers = [_number(run, options) for run in runs]
    flush = (np.empty(2 * host_machine().l3_bytes // 8, "float64")
             if options.flush_cache else None)
    failed = 0
    for run, number in zip(runs, numbers):  # unrecorded: thread team and caches settle
        for _ in range(number):
            failed |= run()
    costs: list[list[float]] = [[] for _ in runs]
    for _ in range(options.repeat):
        for k, (run, number) in enumerate(zip(runs, numbers)):
            if flush is not None:
                flush.fill(1.0)
            start = time.perf_counter()
            for _ in range(number):
                failed |= run()  # a status, checked after the clock stops
            costs[k].append((time.perf_counter() - start) / number)
    _check_status(failed)
    return (costs[-1], costs[0] if reference else [])


def _number(run, options: MeasureOptions) -> int:
    """Runs per measurement: ``number``, raised until one takes ``min_repeat_ms``."""
    start = time.perf_counter()
    _check_status(run())
    once = max(time.perf_counter() - start, 1e-9)
    return min(max(options.number, math.ceil(options.min_repeat_ms / 1e3 / once)),
               _MAX_NUMBER)


def _check_status(status: int) -> None:
    """A kernel that fails on a later call (a workspace it could not allocate) would
    time as a very fast no-op: an error, not a cost."""
    if status:
        raise _Wrong(f"run: the kernel returned status {status} on a timed run")


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)


__all__ = ["MeasureOptions", "MeasureResult", "WorkerServer", "serve"]
