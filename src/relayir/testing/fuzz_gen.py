"""Random programs for differential fuzzing (``fuzz.py``).

``generate(seed, samplers)`` makes one program: a dataflow block of random ops (lets,
tuples, broadcasting, reductions, every op with a sampler), and in some programs control
flow for the interpreter-vs-VM pair (``fuzz_control``) or dynamic (``?``) input
dimensions, which only the VM runs; and some are *spatial*: convolution networks drawn
from ``fuzz_spatial.SPATIAL``, what opt level 3 rewrites most (blocked layouts, Winograd,
packed dense weights).
"""

from __future__ import annotations

import dataclasses
import random

from ..ir.types import TensorType
from .fuzz_build import Builder, TypeDisagrees
from .fuzz_control import add_control
from .fuzz_program import Block, StepError
from .fuzz_spatial import SPATIAL, WEIGHTS
from .fuzz_values import EDGE_SHARES


@dataclasses.dataclass
class Options:
    """What a generated program may contain."""

    size: int = 6  # op steps in the main block
    dynamic: float = 0.15  # chance of a program with dynamic (``?``) input dimensions
    control: float = 0.25  # chance of control flow (interpreter-vs-VM programs)
    ops: tuple | None = None  # restrict to these ops (None: every op with a sampler)
    spatial: float = 0.3  # chance of a convolution-network program (static, dataflow)
    edges: float = -1.0  # share of edge values in the inputs (< 0: drawn per program)


def _add_ops(b: Builder, samplers: dict, names: list, n: int, stats: dict) -> None:
    """``n`` op steps, each from a random sampler (tried a few times)."""
    added = 0
    for _ in range(n * 6):
        if added == n:
            break
        name = b.choice(names)
        mark = len(b.block.steps)
        try:
            args, attrs = samplers[name](b)
            b.call(name, args, attrs)
        except (StepError, TypeDisagrees) as exc:
            del b.block.steps[mark:]  # inputs made for a refused sample go too
            stats["rejected"] = stats.get("rejected", 0) + 1
            if isinstance(exc, TypeDisagrees):  # a bug of the op: reported, then skipped
                stats.setdefault("type_findings", []).append(str(exc))
            continue
        added += 1


def _outputs(b: Builder) -> list[int]:
    """The last value, plus up to two values nothing else uses."""
    steps = b.block.steps
    used = {j for s in steps for a in s.args for j in (a if isinstance(a, tuple) else (a,))}
    last = next(i for i in range(len(steps) - 1, -1, -1) if steps[i].kind != "param")
    free = [i for i, s in enumerate(steps) if i not in used and i != last
            and s.kind in ("call", "get") and isinstance(s.type, TensorType)]
    return [last, *b.sample(free, min(len(free), b.randint(0, 2)))]


def generate(seed: int, samplers: dict, options: Options | None = None,
             stats: dict | None = None) -> tuple[Block, dict]:
    """One random program (a top-level ``Block``) and what it contains."""
    options = options or Options()
    stats = {} if stats is None else stats
    rng = random.Random(seed)
    dynamic = rng.random() < options.dynamic
    control = rng.random() < options.control
    edges = rng.choice(EDGE_SHARES)
    spatial = options.ops is None and rng.random() < options.spatial
    if spatial:  # a network: static shapes, no control flow
        dynamic = control = False
        samplers = SPATIAL
        names = [n for n in sorted(SPATIAL) for _ in range(WEIGHTS.get(n, 1))]
    else:
        names = sorted(options.ops or samplers)
    b = Builder(seed, edges=edges if options.edges < 0 else options.edges, dynamic=dynamic)
    _add_ops(b, samplers, names, options.size, stats)
    if control:
        add_control(b, b.randint(1, 2))
    if not any(s.kind not in ("param", "const") for s in b.block.steps):
        b.call("copy", [b.data()])
    b.block.outputs = _outputs(b)
    return b.block, {"dynamic": dynamic, "control": control, "spatial": spatial,
                     "edges": b.edges}
