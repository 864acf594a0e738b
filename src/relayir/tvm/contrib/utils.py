"""``tvm.contrib.utils``: ``tempdir()`` (``relpath``, ``path``, ``tmp / "name"``)."""

from __future__ import annotations

import os
import pathlib
import shutil
import tempfile


class TempDirectory:
    """A temporary directory, removed when the object goes away (or ``remove()``)."""

    def __init__(self, custom_path: str | None = None, keep_for_debug: bool = False):
        if custom_path:
            os.makedirs(custom_path, exist_ok=True)
            self.temp_dir = custom_path
        else:
            self.temp_dir = tempfile.mkdtemp(prefix="relayir-tvm-")
        self._keep = keep_for_debug or bool(custom_path)

    def relpath(self, name: str) -> str:
        return os.path.join(self.temp_dir, name)

    def listdir(self) -> list[str]:
        return os.listdir(self.temp_dir)

    def remove(self) -> None:
        if not self._keep and self.temp_dir and os.path.isdir(self.temp_dir):
            shutil.rmtree(self.temp_dir, ignore_errors=True)
        self.temp_dir = None

    def __del__(self):
        if getattr(self, "temp_dir", None):
            self.remove()

    def __enter__(self) -> TempDirectory:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    @property
    def path(self) -> pathlib.Path:
        return pathlib.Path(self.temp_dir)

    def __truediv__(self, other: str | os.PathLike) -> pathlib.Path:
        if not isinstance(other, (str, os.PathLike)):
            raise TypeError(f"TempDirectory / needs a str or path, found {other!r}")
        return self.path / other


def tempdir(custom_path: str | None = None, keep_for_debug: bool = False) -> TempDirectory:
    return TempDirectory(custom_path, keep_for_debug)


__all__ = ["TempDirectory", "tempdir"]
