"""Dynamic batching: requests to one model version queue here and run together.

One collector task per batching version takes a free instance first, then the oldest
request, then more requests while the batch has room (``max_batch_size`` rows) and the
oldest has waited less than ``max_queue_delay_us``. While every instance is busy,
requests pile up, so the next batch takes them all: under load batches fill without
any delay configured. The batch runs in a worker thread (off the event loop) and each
request gets its own rows of the outputs back.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from .errors import Unavailable
from .version import ModelVersion


@dataclass
class _Item:
    arrays: list[np.ndarray]
    rows: int
    future: asyncio.Future
    queued: float  # perf_counter at arrival


@dataclass(frozen=True)
class BatchResult:
    outputs: list[np.ndarray]
    queue_seconds: float
    batch_rows: int


class Batcher:
    def __init__(self, version: ModelVersion, on_batch=None):
        self.version = version
        self.delay = version.config.max_queue_delay_us * 1e-6
        self.max_rows = version.max_rows
        self._items: deque[_Item] = deque()
        self._wake = asyncio.Event()
        self._slots = asyncio.Semaphore(version.config.instances)
        self._task: asyncio.Task | None = None
        self._on_batch = on_batch  # called with the rows of each batch run (metrics)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._collect())

    async def submit(self, arrays: list[np.ndarray], rows: int) -> BatchResult:
        future = asyncio.get_running_loop().create_future()
        self._items.append(_Item(arrays, rows, future, time.perf_counter()))
        self._wake.set()
        return await future

    async def _collect(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._slots.acquire()
            while not self._items:
                self._wake.clear()
                await self._wake.wait()
            batch = [self._items.popleft()]
            rows = batch[0].rows
            deadline = batch[0].queued + self.delay
            while rows < self.max_rows:
                if self._items:
                    if rows + self._items[0].rows > self.max_rows:
                        break
                    batch.append(self._items.popleft())
                    rows += batch[-1].rows
                    continue
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    break
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), remaining)
                except asyncio.TimeoutError:
                    break
            loop.create_task(self._run(batch, rows))

    async def _run(self, batch: list[_Item], rows: int) -> None:
        start = time.perf_counter()
        try:
            n = len(batch[0].arrays)
            arrays = batch[0].arrays if len(batch) == 1 else \
                [np.concatenate([it.arrays[i] for it in batch]) for i in range(n)]
            outputs = await self.version.execute(arrays, rows)
            if self._on_batch is not None:
                self._on_batch(rows)
            offset = 0
            for it in batch:
                if not it.future.done():
                    it.future.set_result(BatchResult(
                        [o[offset: offset + it.rows] for o in outputs], start - it.queued, rows))
                offset += it.rows
        except Exception as exc:  # the requests of the batch get the error; the loop goes on
            for it in batch:
                if not it.future.done():
                    it.future.set_exception(exc)
        finally:
            self._slots.release()

    async def close(self) -> None:
        """Stop collecting (the version has drained, so nothing waits)."""
        if self._task is not None:
            self._task.cancel()
        while self._items:
            it = self._items.popleft()
            if not it.future.done():
                it.future.set_exception(Unavailable(f"model {self.version.name!r} version "
                                                    f"{self.version.number} was unloaded"))


__all__ = ["BatchResult", "Batcher"]
