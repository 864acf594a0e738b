"""The model repository on disk, laid out as Triton and OpenVINO Model Server lay it out::

    REPO/<model>/config.json                   optional: max_batch_size, max_queue_delay_us,
                                               instances, threads, inline_below_us
    REPO/<model>/<version>/model.relayir       any compiled artifact (relayir compile)
    REPO/<model>/<version>/model.<k>.relayir   optional: the same model at other batch sizes

A version is a directory named by a positive integer; the highest one that loads is
served by default. ``scan`` reads the layout and a signature per version (file sizes
and modification times) so the watcher sees new and rewritten versions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .errors import RepositoryError

MODEL_FILE = "model.relayir"


@dataclass(frozen=True)
class ModelConfig:
    """``config.json``: ``max_batch_size`` 0 serves each request alone (no dynamic
    batching); ``max_queue_delay_us`` is how long a batch waits to fill; ``instances``
    copies of the model run in parallel threads, each with a team of ``threads`` kernel
    threads (0: one for a model run inline, else the cores shared between the
    instances); a model whose fastest warm-up run (of its largest batch) takes less
    than ``inline_below_us`` runs on the event loop's thread, with one instance (0:
    always on worker threads)."""

    max_batch_size: int = 0
    max_queue_delay_us: int = 0
    instances: int = 1
    threads: int = 0
    inline_below_us: int = 50

    @staticmethod
    def read(model_dir: Path) -> ModelConfig:
        path = model_dir / "config.json"
        if not path.is_file():
            return ModelConfig()
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise RepositoryError(f"{path}: not readable JSON: {exc}") from None
        if not isinstance(doc, dict):
            raise RepositoryError(f"{path}: a JSON object expected")
        known = {"max_batch_size", "max_queue_delay_us", "instances", "threads",
                 "inline_below_us"}
        unknown = set(doc) - known
        if unknown:
            raise RepositoryError(f"{path}: unknown keys {', '.join(sorted(unknown))}; known: "
                                  f"{', '.join(sorted(known))}")
        for key, value in doc.items():
            low = 1 if key == "instances" else 0
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise RepositoryError(f"{path}: {key} must be an integer >= {low}, found "
                                      f"{value!r}")
        return ModelConfig(**doc)


@dataclass(frozen=True)
class VersionFiles:
    version: int
    files: tuple[Path, ...]  # model.relayir first
    signature: tuple  # (name, size, mtime_ns) per file: a change means a new build


def model_names(repo: Path) -> list[str]:
    if not repo.is_dir():
        raise RepositoryError(f"{repo}: the model repository is not a directory")
    return sorted(p.name for p in repo.iterdir() if p.is_dir() and not p.name.startswith("."))


def scan_versions(model_dir: Path) -> dict[int, VersionFiles]:
    """The version directories of one model that hold a ``model.relayir``."""
    versions = {}
    if not model_dir.is_dir():
        return versions
    for d in model_dir.iterdir():
        if not (d.is_dir() and d.name.isdigit() and int(d.name) > 0):
            continue
        main = d / MODEL_FILE
        if not main.is_file():
            continue
        extra = sorted(p for p in d.glob("model.*.relayir") if p.name != MODEL_FILE)
        files = (main, *extra)
        try:
            signature = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files)
        except OSError:
            continue  # removed while scanning: the next scan sees the result
        versions[int(d.name)] = VersionFiles(int(d.name), files, signature)
    return versions


__all__ = ["MODEL_FILE", "ModelConfig", "VersionFiles", "model_names", "scan_versions"]
