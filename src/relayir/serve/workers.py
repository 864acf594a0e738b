"""Worker threads that run models off the event loop, one per instance.

Each thread owns one instance (its executor states: input and output buffers), takes
jobs from one shared queue and hands each result back to the event loop with
``call_soon_threadsafe``. ctypes releases the GIL while a kernel runs, so the threads
compute in parallel. A thread per instance rather than ``run_in_executor``: the
executor's work items and chained futures cost about 50 us more per call (measured on
the loopback benchmark's machine), which for a small model is more than the model.

Each thread that runs a model sets how many threads its kernels use
(``relayir.runtime.set_num_threads``: OpenMP's team size is per calling thread), so
instances share the cores instead of each starting a team as wide as the machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable

from ..runtime.threads import set_num_threads

_team = threading.local()  # the kernel team size last set on this thread


def use_threads(n: int) -> None:
    """Kernels called from this thread use ``n`` threads (set only when it changes)."""
    if getattr(_team, "size", None) != n:
        set_num_threads(n)
        _team.size = n


class Workers:
    """``await workers.call(fn, *args)`` runs ``fn(*args)`` on a worker thread, whose
    instance ``fn`` reads as ``workers.instance()``."""

    def __init__(self, instances: list, name: str, threads: int = 1):
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._local = threading.local()
        self._instances = list(instances)
        self.team = threads  # kernel threads per instance
        self.threads = [threading.Thread(target=self._serve, args=(inst,), daemon=True,
                                         name=f"{name}-{i}")
                        for i, inst in enumerate(instances)]
        for t in self.threads:
            t.start()

    def instance(self):
        """The instance of the calling worker thread."""
        return self._local.instance

    async def call(self, fn: Callable, *args):
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._jobs.put((fn, args, loop, future))
        return await future

    def _serve(self, instance) -> None:
        self._local.instance = instance
        use_threads(self.team)
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fn, args, loop, future = job
            try:
                result, error = fn(*args), None
            except BaseException as exc:  # handed to the awaiting request
                result, error = None, exc
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(_settle, future, result, error)

    def close(self) -> None:
        """Stop the threads once the jobs queued before have run."""
        for _ in self.threads:
            self._jobs.put(None)


class InlineWorker:
    """``Workers``' interface for a model too fast to be worth a thread: ``call`` runs
    ``fn`` at once on the calling (event loop) thread, on the one instance."""

    threads: list = []

    def __init__(self, instance, threads: int = 1):
        self._instances = [instance]
        self.team = threads  # kernel threads, set on the event loop's thread

    def instance(self):
        return self._instances[0]

    async def call(self, fn: Callable, *args):
        use_threads(self.team)
        return fn(*args)

    def close(self) -> None:
        pass


def _settle(future: asyncio.Future, result, error) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


__all__ = ["InlineWorker", "Workers", "use_threads"]
