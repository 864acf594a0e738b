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


KNOWN: list[Known] = [  # empty: the routed findings of 2026-12-03 (Winograd tiles, batch
    # norm with run-time statistics) and 2026-12-04 (sums of -0.0, a normalisation's
    # zero, float16 cumprod) were fixed; their corpus cases are fixed_* now
]


def known(finding: dict) -> Known | None:
    text = " ".join([finding.get("pair", ""), finding.get("kind", ""),
                     ",".join(finding.get("ops", [])), finding.get("detail", "")])
    for k in KNOWN:
        if re.search(k.pattern, text, re.S):
            return k
    return None
