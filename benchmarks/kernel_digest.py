"""The SHA-256 of the C each benchmark model compiles to (``compare.py``'s models,
imported with ``from_pytorch`` and built at opt level 3 for the cpu target), after the
C preprocessor with the library's own flags (so comments and macros no kernel uses do
not count): two commits that print the same digest for a model run the same kernels,
so a timing taken at one holds at the other. ``--asm`` digests the assembly instead
(labels renumbered away): the same instructions even where the C text changed (a helper
added to the header, a conversion written as an inline call).

    python benchmarks/kernel_digest.py                       # every model, this checkout
    python benchmarks/kernel_digest.py --asm                 # the instructions
    PYTHONPATH=/tmp/old/src python benchmarks/kernel_digest.py --models resnet18
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import MODELS, _torch_twin  # noqa: E402


def commit() -> str:
    """The commit of the relayir that is imported (a worktree's under PYTHONPATH)."""
    import relayir

    src = Path(relayir.__file__).resolve().parents[2]
    out = subprocess.run(["git", "-C", str(src), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=False)
    return out.stdout.strip() or "unknown"


# the flags of the cpu target before libraries recorded theirs (commits before 11cc4a0)
OLD_FLAGS = ("-O3", "-std=gnu11", "-fPIC", "-ffp-contract=fast", "-march=native", "-fopenmp")


def digest(model: str, asm: bool = False) -> str:
    import numpy as np

    import relayir as relay
    from relayir.testing.models import get_workload, make_inputs

    workload, knobs = MODELS[model]
    mod, params, _ = get_workload(workload, **knobs)
    inputs = make_inputs(workload, mod)
    infos = [(k, (tuple(np.shape(v)), np.asarray(v).dtype.name)) for k, v in inputs.items()]
    imported, weights = relay.frontend.from_pytorch(_torch_twin(workload, knobs, params), infos)
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(imported, target="cpu", params=weights)
    kernels = lib.get_lib()
    flags = getattr(kernels, "flags", None) or OLD_FLAGS  # older libraries kept none
    flags = [f for f in flags if f.startswith(("-m", "-f", "-D", "-O", "-std"))]
    stage = ["-S", "-o", "-"] if asm else ["-E", "-P"]
    out = subprocess.run(["gcc", *stage, *flags, "-x", "c", "-"], check=True,
                         input=kernels.get_source(), capture_output=True, text=True).stdout
    if asm:  # label numbers count every function parsed, used or not
        out = re.sub(r"\.L\w*?\d+", ".L", out)
        out = "\n".join(line for line in out.splitlines()
                        if not line.lstrip().startswith((".file", ".ident")))
    return hashlib.sha256(out.encode()).hexdigest()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated")
    p.add_argument("--asm", action="store_true", help="digest the assembly, not the C")
    args = p.parse_args()
    print(f"commit {commit()}")
    for model in args.models.split(","):
        print(f"{model} {digest(model, args.asm)}")


if __name__ == "__main__":
    main()
