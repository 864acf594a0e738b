"""Measuring candidates side by side in one process (shared by the benchmark scripts).

Other runtimes' thread pools (ONNX Runtime's, PyTorch's, OpenBLAS's) keep spinning
after a call and take the cores from whatever runs next: measured on a resnet18 conv
layer, relayir timed right after ONNX Runtime ran 3x slower than timed after another
relayir kernel. So relayir's candidates are interleaved among themselves (a noisy
machine slows every candidate of a round alike) and each foreign runtime is measured
alone, after a pause long enough for a spinning pool to go to sleep.
"""

from __future__ import annotations

import time
from collections.abc import Callable

FOREIGN = ("ort", "torch", "numpy")  # names of the candidates that are another runtime
SETTLE_S = 0.2


def interleaved(fns: dict, rounds: int, measure: Callable) -> dict[str, list[float]]:
    """``measure(fn)`` (seconds) ``rounds`` times per name: relayir's names in turn, then
    each ``FOREIGN`` name alone."""
    times: dict = {name: [] for name in fns}
    time.sleep(SETTLE_S)
    own = [name for name in fns if name not in FOREIGN]
    for _ in range(rounds):
        for name in own:
            times[name].append(measure(fns[name]))
    for name in (n for n in fns if n in FOREIGN):
        time.sleep(SETTLE_S)
        times[name] = [measure(fns[name]) for _ in range(rounds)]
    time.sleep(SETTLE_S)
    return times
