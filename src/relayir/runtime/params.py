"""Params (the constants a built graph reads) as ``.npz`` bytes, never pickled
(Relay's ``save_param_dict`` / ``load_param_dict``)."""

from __future__ import annotations

import io
import os
import zipfile
import zlib

import numpy as np

from ..errors import Error


class ModuleFormatError(Error):
    """A file is not a relayir module archive (or its params are not an ``.npz`` without
    pickles), or it was written by an unknown version."""


def save_params(params: dict[str, np.ndarray]) -> bytes:
    """Params as ``.npz`` bytes (Relay's ``save_param_dict``); ``load_params`` reads them."""
    buf = io.BytesIO()
    # asarray(order="C"), not ascontiguousarray: that one turns a 0-d array (a scalar
    # constant, such as a quantized model's scale) into shape (1,)
    np.savez(buf, **{k: np.asarray(v, order="C") for k, v in params.items()})
    return buf.getvalue()


def load_params(data: bytes | str | os.PathLike) -> dict[str, np.ndarray]:
    """Params from ``.npz`` bytes or a path, never unpickling anything. Anything else
    (empty or truncated bytes, a member that is not an ``.npy`` array, a damaged
    compressed member) is a ``ModuleFormatError``."""
    if isinstance(data, (bytes, bytearray)) and not data.startswith(b"PK"):
        raise ModuleFormatError(f"cannot read params (an .npz without pickles): "
                                f"{len(data)} bytes that are not a zip archive")
    src = io.BytesIO(data) if isinstance(data, (bytes, bytearray)) else data
    try:
        with np.load(src, allow_pickle=False) as npz:
            if not isinstance(npz, np.lib.npyio.NpzFile):
                raise ValueError("it holds one array, not an .npz archive of named arrays")
            params = {k: npz[k] for k in npz.files}
    except (ValueError, OSError, EOFError, KeyError, zlib.error, zipfile.BadZipFile) as exc:
        raise ModuleFormatError(f"cannot read params (an .npz without pickles): "
                                f"{type(exc).__name__}: {exc}") from None
    bad = sorted(k for k, v in params.items() if not isinstance(v, np.ndarray))
    if bad:
        raise ModuleFormatError(f"cannot read params (an .npz without pickles): members "
                                f"{bad} are not .npy arrays")
    return params


__all__ = ["ModuleFormatError", "load_params", "save_params"]
