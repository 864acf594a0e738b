"""``tvm.rpc``: the local session only.

``rpc.LocalSession()`` is TVM's in-process session: ``upload`` copies a file into the
session's directory, ``load_module`` loads it with relayir's loader, ``cpu()`` is the
host. Remote sessions (``rpc.Server``, ``rpc.connect``, the tracker) are not part of
relayir: it runs on the host it was imported on.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .error import not_in_relayir
from .runtime import load_module
from .runtime.ndarray import cpu, device


class LocalSession:
    """TVM's ``rpc.LocalSession``: the same calls as a remote session, run here."""

    def __init__(self):
        self._dir = Path(tempfile.mkdtemp(prefix="relayir-rpc-"))

    def upload(self, data, target: str | None = None) -> None:
        name = target or Path(str(data)).name
        if isinstance(data, (bytes, bytearray)):
            (self._dir / name).write_bytes(bytes(data))
        else:
            shutil.copyfile(data, self._dir / name)

    def download(self, path: str) -> bytes:
        return (self._dir / path).read_bytes()

    def remove(self, path: str) -> None:
        (self._dir / path).unlink(missing_ok=True)

    def listdir(self, path: str = ".") -> list[str]:
        return sorted(p.name for p in (self._dir / path).iterdir())

    def load_module(self, path: str):
        return load_module(str(self._dir / path))

    def cpu(self, dev_id: int = 0):
        return cpu(dev_id)

    def device(self, dev_type, dev_id: int = 0):
        return device(dev_type, dev_id)

    def get_function(self, name: str):
        raise not_in_relayir(f"tvm.rpc.LocalSession.get_function({name!r})",
                             "relayir has no global function registry")()


_REMOTE = "relayir runs on the host it was imported on; only rpc.LocalSession() is offered"
Server = not_in_relayir("tvm.rpc.Server", _REMOTE)
connect = not_in_relayir("tvm.rpc.connect", _REMOTE)
connect_tracker = not_in_relayir("tvm.rpc.connect_tracker", _REMOTE)
TrackerSession = not_in_relayir("tvm.rpc.TrackerSession", _REMOTE)
RPCSession = LocalSession

__all__ = ["LocalSession", "RPCSession", "Server", "TrackerSession", "connect",
           "connect_tracker"]
