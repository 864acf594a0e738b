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


KNOWN: list[Known] = [
    Known("winograd-nonfinite-tile", "tir (the Winograd input transform, AlterOpLayout)",
          "Winograd's input transform mixes a whole tile: a NaN or Inf input pixel makes "
          "NaN of outputs whose direct convolution never reads it (the direct algorithm "
          "gives numpy's answer). Fix: check each input tile for non-finite values and "
          "take the direct sum there (open_winograd_nan_input_tile)",
          r"/cpu/O3 mismatch .*nn\.conv2d.*got \[.*nan"),
    Known("batch-norm-fold-runtime-stats", "transform/simplify_inference.py",
          "batch_norm with statistics that are inputs (not constants) is folded into "
          "x * scale + shift; where they make scale or shift infinite, inf - inf gives NaN "
          "where the reference's (x - mean) / sqrt(var + eps) * gamma + beta gives +-inf "
          "(constant statistics keep the reference's order). Fix: fold run-time statistics "
          "only where the scale is finite, or keep the order (open_batch_norm_fold_inf_input)",
          r"mismatch .*nn\.batch_norm.*want \[.*inf.*got \[.*nan"),
]


def known(finding: dict) -> Known | None:
    text = " ".join([finding.get("pair", ""), finding.get("kind", ""),
                     ",".join(finding.get("ops", [])), finding.get("detail", "")])
    for k in KNOWN:
        if re.search(k.pattern, text, re.S):
            return k
    return None
