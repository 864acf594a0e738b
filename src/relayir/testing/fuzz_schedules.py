"""Random valid schedules for the fuzzer (``--schedules random``): what the tuner may
pick, checked against the oracle before any user's records pick it.

``RandomSchedules(seed)`` is a ``TunedSchedules`` that gives every primitive function a
config drawn from its task's search space (``autotune.space.ConfigSpace``: every knob of
its kind, each valid combination equally likely), the same one for the same function
within a program. ``random_pass_config(rng)`` draws the graph-level choices the tuner and
``AlterOpLayout`` make at opt level 3: the convolution algorithm, the Winograd tile and
the block width (8 floats, the AVX2 register, beside the AVX-512 16).
"""

from __future__ import annotations

import random

from ..autotune.space import ConfigSpace
from ..autotune.task import Task, workload_digest
from ..backend.lowering import TunedSchedules
from ..backend.target import Target
from ..ir.expr import Function
from ..transform.alter_op_layout import ALGORITHM_KEY, BLOCK_KEY, WINOGRAD_TILE_KEY


class RandomSchedules(TunedSchedules):
    def __init__(self, seed: int, drawn: dict | None = None):
        """``drawn``: configs by workload to use as given (a corpus case's, replayed);
        a workload not in it draws from the seed."""
        self.rng = random.Random(seed)
        self.drawn: dict[str, dict | None] = dict(drawn or {})  # workload -> its config

    def schedule_for(self, fn: Function, target: Target) -> dict | None:
        tgt = Target.parse(target)
        if tgt.kind != "cpu":
            return None
        workload = workload_digest(fn)
        if workload not in self.drawn:
            self.drawn[workload] = self._draw(fn, tgt)
        config = self.drawn[workload]
        if config is None:
            return None
        return ConfigSpace(Task("fuzz", fn, tgt, workload=workload)).schedule(config)

    def _draw(self, fn: Function, tgt: Target) -> dict | None:
        try:
            space = ConfigSpace(Task("fuzz", fn, tgt))
        except Exception:  # noqa: BLE001  (a function the tuner has no task kind for)
            return None
        return space.config(space.sample(self.rng))


def random_pass_config(rng: random.Random) -> dict:
    """``PassContext`` config for a random point of the graph-level choices."""
    return {ALGORITHM_KEY: rng.choice(("auto", "direct", "winograd")),
            WINOGRAD_TILE_KEY: rng.choice(("auto", 2, 4, 6)),
            BLOCK_KEY: rng.choice((8, 16))}


def replay(info: dict) -> dict:
    """``check``'s build arguments for a corpus case made under random schedules (its
    header's ``schedules`` and ``pass_config``), or none."""
    if "pass_config" not in info:
        return {}
    return {"schedules": RandomSchedules(info.get("seed", 0), info.get("schedules")),
            "pass_config": info["pass_config"]}


__all__ = ["RandomSchedules", "random_pass_config", "replay"]
