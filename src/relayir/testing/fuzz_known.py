"""Disagreements the fuzzer has found whose fix belongs to another part of the tree:
each matched by the pair, the ops of the shrunk program and the message, and named
by where the fix goes. ``known(finding)`` gives the entry a finding matches, if any; a
run reports those apart from new findings. Delete an entry when its fix lands (its
corpus case, ``status: "open"``, then fails as an unexpected pass).
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Known(NamedTuple):
    key: str
    where: str  # the file and function a fix belongs in
    what: str
    pattern: str  # matched against "pair kind ops detail"


KNOWN: list[Known] = [  # the routed findings of 2026-12-03 (Winograd tiles, batch norm
    # with run-time statistics) were fixed; their corpus cases are fixed_* now
    Known("sum-of-negative-zeros",
          "te/computes/reduce.py (the float sum's order) or testing/fuzz_compare.py "
          "(the signed-zero rule)",
          "a float sum whose terms are all -0.0: numpy's add.reduce starts from +0.0 below "
          "8 terms (pairwise sum) and gives +0.0, the C sum keeps -0.0 (mean of -0.0, "
          "instance_norm's mean; seeds 9469, 9432)",
          r"(mean|nn\.instance_norm)\(.*want \[(0\.0(, )?)+\] got \[(-0\.0(, )?)+\]"),
    Known("float16-cumprod-rounding",
          "te/computes (cumprod of float16: the per-step rounding numpy does)",
          "float16 cumprod of denormals rounds differently in C and numpy; a discrete op "
          "downstream (unique) then differs in shape (seed 9162)",
          r"cumprod\(.*unique\("),
]


def known(finding: dict) -> Known | None:
    text = " ".join([finding.get("pair", ""), finding.get("kind", ""),
                     ",".join(finding.get("ops", [])), finding.get("detail", "")])
    for k in KNOWN:
        if re.search(k.pattern, text, re.S):
            return k
    return None
