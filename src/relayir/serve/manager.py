"""Which version of each model serves, and hot swap.

The manager scans the repository (at start, on the repository extension's ``load``,
and every ``poll_seconds`` while the server runs). For each model it wants the highest
version on disk that has not already failed with the same files: that version is
loaded and warmed up in a worker thread while the current one keeps serving, then
becomes the current one in one assignment on the event loop (atomic for every request:
a request takes the current version once, when it starts, and finishes on it). The
previous version is unloaded after its requests in flight have finished. A version that
fails to load is logged and kept in ``failed`` (reported by the ready endpoints); the
current version keeps serving, and the next version on disk is tried.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path

from .batcher import Batcher
from .errors import NotFound, RepositoryError, Unavailable
from .metrics import Metrics
from .repository import ModelConfig, VersionFiles, model_names, scan_versions
from .version import ModelVersion

log = logging.getLogger("relayir.serve")


@dataclass
class ModelEntry:
    name: str
    config: ModelConfig
    current: ModelVersion | None = None
    batcher: Batcher | None = None
    loading: int | None = None  # the version being loaded
    failed: dict[int, tuple[tuple, str]] = field(default_factory=dict)  # v -> (signature, why)

    def states(self) -> dict[int, tuple[str, str]]:
        """Version -> (state, reason), for the ready endpoints and the repository index."""
        out = {v: ("UNAVAILABLE", why) for v, (_, why) in self.failed.items()}
        if self.loading is not None:
            out[self.loading] = ("LOADING", "")
        if self.current is not None:
            out[self.current.number] = ("READY", "")
        return out


class ModelManager:
    """``only``: serve these models of the repository alone (a Ray Serve replica of one
    model, ``ray.py``); None: every model."""

    def __init__(self, repo: str | Path, metrics: Metrics, poll_seconds: float = 1.0,
                 only: frozenset[str] | None = None):
        self.repo = Path(repo)
        self.metrics = metrics
        self.poll_seconds = poll_seconds
        self.only = only
        self.models: dict[str, ModelEntry] = {}
        self.unloaded: set[str] = set()  # unloaded through the API: the watcher leaves them
        self._lock = asyncio.Lock()  # one sync at a time
        self._watcher: asyncio.Task | None = None
        self._retiring: set[asyncio.Task] = set()

    # ------------------------------------------------------------ lifecycle

    async def start(self, watch: bool = True) -> None:
        await self.sync()
        if watch and self.poll_seconds > 0:
            self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
        for entry in list(self.models.values()):
            await self._retire(entry, entry.current, entry.batcher)
        self.models.clear()

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.poll_seconds)
            try:
                await self.sync()
            except Exception:  # a bad scan is logged; the watcher keeps watching
                log.exception("scanning the model repository %s failed", self.repo)

    # ------------------------------------------------------------ requests

    def get(self, name: str, version: str | None = None) -> ModelVersion:
        """The version a request runs on: the current one, or the one named (if it is
        the one loaded)."""
        entry = self.models.get(name)
        if entry is None:
            raise NotFound(f"unknown model {name!r}; the repository serves "
                           f"{', '.join(sorted(self.models)) or 'no models'}")
        current = entry.current
        if version is not None:
            if not version.isdigit():
                raise NotFound(f"model {name!r}: version {version!r} is not a version number")
            if current is None or int(version) != current.number:
                state, why = entry.states().get(int(version), ("", ""))
                detail = f" ({state}: {why})" if state else ""
                serving = f"; it serves version {current.number}" if current else ""
                raise NotFound(f"model {name!r} has no loaded version {version}{detail}"
                               f"{serving}")
        if current is None:
            reasons = "; ".join(f"version {v}: {why}" for v, (_, why) in entry.failed.items())
            raise Unavailable(f"model {name!r} has no version ready to serve"
                              + (f" ({reasons})" if reasons else ""))
        return current

    def batcher(self, version: ModelVersion) -> Batcher | None:
        entry = self.models.get(version.name)
        if entry is not None and entry.current is version:
            return entry.batcher
        return None

    # ------------------------------------------------------------ repository

    async def load_model(self, name: str) -> None:
        """The repository extension's load: (re)read the model from disk."""
        if not (self.repo / name).is_dir() or (self.only is not None and name not in self.only):
            raise NotFound(f"no model {name!r} in the repository {self.repo}")
        self.unloaded.discard(name)
        await self.sync([name])
        entry = self.models.get(name)
        if entry is None or entry.current is None:
            reasons = "; ".join(f"version {v}: {why}"
                                for v, (_, why) in (entry.failed if entry else {}).items())
            raise RepositoryError(f"model {name!r} failed to load: {reasons or 'no version'}")

    async def unload_model(self, name: str) -> None:
        entry = self.models.pop(name, None)
        if entry is None:
            raise NotFound(f"unknown model {name!r}")
        self.unloaded.add(name)
        await self._retire(entry, entry.current, entry.batcher)

    async def sync(self, names: list[str] | None = None) -> None:
        async with self._lock:
            for name in names if names is not None else model_names(self.repo):
                if name not in self.unloaded and (self.only is None or name in self.only):
                    await self._sync_model(name)

    async def _sync_model(self, name: str) -> None:
        model_dir = self.repo / name
        try:
            config = ModelConfig.read(model_dir)
        except RepositoryError as exc:
            entry = self.models.setdefault(name, ModelEntry(name, ModelConfig()))
            if entry.failed.get(0, ("", ""))[1] != str(exc):
                log.error("model %s: %s", name, exc)
            entry.failed[0] = ((), str(exc))
            return
        entry = self.models.setdefault(name, ModelEntry(name, config))
        entry.failed.pop(0, None)
        entry.config = config
        current = entry.current
        for files in sorted(scan_versions(model_dir).values(), key=lambda f: -f.version):
            if current is not None and files.version < current.number:
                break
            if current is not None and files.version == current.number \
                    and files.signature == current.files.signature:
                break
            failed = entry.failed.get(files.version)
            if failed is not None and failed[0] == files.signature:
                continue
            if await self._load_version(entry, files):
                break

    async def _load_version(self, entry: ModelEntry, files: VersionFiles) -> bool:
        version = ModelVersion(entry.name, files, entry.config)
        entry.loading = files.version
        try:
            await asyncio.to_thread(version.load)
        finally:
            entry.loading = None
        if version.state != "READY":
            entry.failed[files.version] = (files.signature, version.error)
            self.metrics.load_failures.labels(entry.name).inc()
            log.error("model %s version %s failed to load: %s (serving %s)", entry.name,
                      files.version, version.error,
                      f"version {entry.current.number}" if entry.current else "nothing")
            return False
        entry.failed.pop(files.version, None)
        batcher = Batcher(version, self.metrics.batch.labels(entry.name).observe) \
            if version.batching else None
        if batcher is not None:
            batcher.start()
        old, old_batcher = entry.current, entry.batcher
        entry.current, entry.batcher = version, batcher  # the switch: one step on the loop
        self.metrics.loaded.labels(entry.name, str(version.number)).set(1)
        log.info("model %s version %s ready (%s executor, loaded and warmed up in %.1f ms)",
                 entry.name, version.number, version.base.executor, version.load_seconds * 1e3)
        if old is not None:
            task = asyncio.get_running_loop().create_task(self._retire(entry, old, old_batcher))
            self._retiring.add(task)
            task.add_done_callback(self._retiring.discard)
        return True

    async def _retire(self, entry: ModelEntry, version: ModelVersion | None,
                      batcher: Batcher | None) -> None:
        if version is None:
            return
        await version.drain_and_close()
        if batcher is not None:
            await batcher.close()
        if entry.current is None or entry.current.number != version.number \
                or self.models.get(entry.name) is not entry:
            with contextlib.suppress(KeyError):
                self.metrics.loaded.remove(entry.name, str(version.number))
        log.info("model %s version %s unloaded", entry.name, version.number)


__all__ = ["ModelEntry", "ModelManager"]
