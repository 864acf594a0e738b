"""Loading a saved kernel library: one loader per library ``kind``, in one table.

``export_library`` saves a library as its ``kind``, its ``kernel_table()`` and its
``files()``; ``load_library`` gives them back to the loader of that kind.
"""

from __future__ import annotations

from collections.abc import Callable

from .c_kernels import load_c_library
from .kernels import KernelError, KernelLibrary
from .numpy_kernels import load_numpy_library

LOADERS: dict[str, Callable[[list, dict, str], KernelLibrary]] = {
    "numpy": load_numpy_library,
    "c": load_c_library,
}


def load_library(kind: str, table: list[dict], files: dict[str, bytes],
                 target: str) -> KernelLibrary:
    """The kernel library that ``library.kind``, ``kernel_table()`` and ``files()`` saved."""
    try:
        loader = LOADERS[kind]
    except KeyError:
        raise KernelError(
            f"no loader for {kind!r} kernel libraries; known: {', '.join(sorted(LOADERS))}"
        ) from None
    return loader(table, files, target)


__all__ = ["LOADERS", "load_library"]
