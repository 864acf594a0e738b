"""The on-disk cache of compiled kernels.

Layout under the cache directory::

    lib/<name>-<key>.so      published shared objects (and their .c source beside them)
    lowered/<key>.json       a module's lowered C and kernel table (``backend.lowering``)
    tmp/<random>/            private build directories, one per compile
    failed/<name>-<key>.c    sources that did not compile, kept for the user

Publishing is ``os.replace`` of a finished file from ``tmp/`` (same file system, so
the rename is atomic): a reader sees either no file or a whole one, never a
half-written one, and there is no lock. Two processes that compile the same key
both succeed; the last rename wins and both files are identical. A process that
already mapped the loser keeps its inode, so nothing it loaded goes away.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

__all__ = [
    "cache_dir",
    "cache_enabled",
    "cache_key",
    "clear_cache",
    "code_fingerprint",
    "host_fingerprint",
    "keep_failed",
    "make_build_dir",
    "publish",
    "publish_json",
    "read_json",
]

# Build directories older than this belong to a process that died mid-compile.
_STALE_SECONDS = 24 * 3600


def cache_dir() -> Path:
    """``$RELAYIR_CACHE_DIR``, else ``$XDG_CACHE_HOME/relayir``, else ``~/.cache/relayir``.

    Read on every call (not memoised) so that tests and users can switch it."""
    explicit = os.environ.get("RELAYIR_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "relayir"


def cache_enabled() -> bool:
    """False when ``RELAYIR_NO_CACHE`` is set to anything but ``0``/``false``/``no``/``off``."""
    value = os.environ.get("RELAYIR_NO_CACHE", "").strip().lower()
    return value in ("", "0", "false", "no", "off")


def cache_key(**parts: object) -> str:
    """sha256 of the parts as canonical JSON (keys sorted), so no two different
    part lists can produce the same byte string."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=1)
def host_fingerprint() -> str:
    """The CPU the objects are built for. ``-march=native`` output is only valid on
    the same kind of CPU; a cache directory shared across machines (NFS home)
    must not hand a Zen 4 object to an older CPU, where it would die of SIGILL."""
    parts = [platform.system(), platform.machine()]
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            seen = set()
            for line in f:
                field, _, value = line.partition(":")
                field = field.strip()
                if field in ("model name", "flags", "Features", "CPU part") and field not in seen:
                    seen.add(field)
                    parts.append(value.strip())
                elif not line.strip() and seen:
                    break  # end of the first processor's block
    except OSError:
        parts.append(platform.processor())
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """sha256 of relayir's own Python sources: a cache of what the code DERIVES (lowered
    C) must not outlive an edit of that code, which ``__version__`` does not track."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


def read_json(path: Path):
    """A published JSON file, or None when absent or unreadable (a cache miss)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def publish_json(value, final: Path) -> None:
    """Write ``value`` as JSON to ``final`` atomically (a private temp file, then
    ``os.replace``); a cache that cannot be written is skipped silently."""
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=final.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(value, f, separators=(",", ":"))
        publish(Path(tmp), final)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


def make_build_dir(root: Path | None, prefix: str) -> Path:
    """A fresh private directory for one compile: under ``root/tmp`` (same file
    system as ``root/lib``, which ``os.replace`` needs), or the system temp dir."""
    if root is None:
        # One parent per user, swept like tmp/: atexit cleanup does not run when a
        # process is killed.
        uid = os.getuid() if hasattr(os, "getuid") else "user"
        tmp = Path(tempfile.gettempdir()) / f"relayir-nocache-{uid}"
        try:
            tmp.mkdir(mode=0o700, exist_ok=True)
            _sweep_stale(tmp)
            return Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=tmp))
        except OSError:
            return Path(tempfile.mkdtemp(prefix=f"relayir-{prefix}-"))
    tmp = root / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    _sweep_stale(tmp)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=tmp))


def publish(built: Path, final: Path) -> Path:
    """Move a finished file into place atomically."""
    final.parent.mkdir(parents=True, exist_ok=True)
    os.replace(built, final)
    return final


def keep_failed(root: Path | None, source: str, stem: str) -> Path:
    """Keep a source that failed to compile in ``root/failed`` (or the system temp
    dir when the cache dir cannot be written) and return its path."""
    for base in ([root / "failed"] if root is not None else []) + [
        Path(tempfile.gettempdir()) / "relayir-failed"
    ]:
        try:
            base.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".", suffix=".c", dir=base)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(source)
            return publish(Path(tmp), base / f"{stem}.c")
        except OSError:
            continue
    raise OSError("could not write the failed source anywhere")


def clear_cache(root: Path | None = None) -> None:
    """Delete every cached object (default: the current cache directory)."""
    root = cache_dir() if root is None else root
    for sub in ("lib", "lowered", "tmp", "failed"):
        shutil.rmtree(root / sub, ignore_errors=True)


def _sweep_stale(tmp: Path) -> None:
    now = time.time()
    try:
        entries = list(os.scandir(tmp))
    except OSError:
        return
    for entry in entries:
        try:
            if now - entry.stat(follow_symlinks=False).st_mtime > _STALE_SECONDS:
                shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            pass
