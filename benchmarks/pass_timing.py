"""Time the opt-level-3 optimisation pipeline per pass on a model (default resnet50).

    python benchmarks/pass_timing.py [--model resnet50] [--image-size 224] [--repeat 3]

Prints the per-pass table of the median run (PassTimingInstrument) and the total.
Code generation is not included: this is the Relay-level pipeline only.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np

import relayir as relay
from relayir.testing.models import get_workload
from relayir.transform import PassContext, PassTimingInstrument, bind_params
from relayir.transform.pipeline import optimize


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    mod, params, _ = get_workload(args.model, image_size=args.image_size)
    weights_mb = sum(v.nbytes for v in params.values()) / 2**20
    runs = []
    for _ in range(args.repeat):
        timing = PassTimingInstrument()
        start = time.perf_counter()
        bound = bind_params(mod, {k: relay.const(v) for k, v in params.items()})
        with PassContext(opt_level=3, instruments=[timing]):
            optimize(relay.transform.InferType()(bound))
        runs.append((time.perf_counter() - start, timing))
    runs.sort(key=lambda r: r[0])
    total, timing = runs[len(runs) // 2]
    print(f"{args.model} ({args.image_size}x{args.image_size}, {weights_mb:.0f} MB of weights), "
          f"opt level 3, Python {platform.python_version()}, numpy {np.__version__}")
    print(timing.render())
    print(f"bind + InferType + pipeline: median {total:.2f} s of {args.repeat} "
          f"(range {runs[0][0]:.2f}-{runs[-1][0]:.2f} s)")
    print(f"all runs: {', '.join(f'{t:.2f}' for t, _ in runs)}; median "
          f"{statistics.median(t for t, _ in runs):.2f} s")


if __name__ == "__main__":
    main()
