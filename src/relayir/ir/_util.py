"""Small helpers shared across the IR layer and the passes."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building a big graph or text.

    Printing, parsing and the structural passes allocate millions of small objects and
    free few, which makes the collector rescan the growing heap over and over (half
    the time of printing a 100,000-node program, a third of a pass's); none of them
    builds reference cycles, so nothing is lost by waiting.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
