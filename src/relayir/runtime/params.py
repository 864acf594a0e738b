"""Params (the constants a built graph reads) as ``.npz`` bytes, never pickled
(Relay's ``save_param_dict`` / ``load_param_dict``)."""

from __future__ import annotations

import io
import os
import zipfile

import numpy as np

from ..errors import Error


class ModuleFormatError(Error):
    """A file is not a relayir module archive (or its params are not an ``.npz`` without
    pickles), or it was written by an unknown version."""


def save_params(params: dict[str, np.ndarray]) -> bytes:
    """Params as ``.npz`` bytes (Relay's ``save_param_dict``); ``load_params`` reads them."""
    buf = io.BytesIO()
    np.savez(buf, **{k: np.ascontiguousarray(v) for k, v in params.items()})
    return buf.getvalue()


def load_params(data: bytes | str | os.PathLike) -> dict[str, np.ndarray]:
    """Params from ``.npz`` bytes or a path, never unpickling anything."""
    src = io.BytesIO(data) if isinstance(data, (bytes, bytearray)) else data
    try:
        with np.load(src, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise ModuleFormatError(f"cannot read params (an .npz without pickles): {exc}") from None


__all__ = ["ModuleFormatError", "load_params", "save_params"]
