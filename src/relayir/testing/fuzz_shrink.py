"""Shrinking a failing fuzz program to a minimal one that still fails the same way.

Candidate edits of the top-level block, each kept when ``still_fails`` says the smaller
program still fails: keep one output, or make an earlier value the output; cut a step
(its value becomes a new input, so everything that computed it goes); bypass a call with
one of its arguments of the same type; drop ``let`` bindings; turn an input into a
constant. Edits repeat until none helps. Steps nothing reaches are dropped after each edit.
"""

from __future__ import annotations

import dataclasses

from ..ir.types import TensorType
from .fuzz_program import Block, Step


def _refs(step: Step) -> list[int]:
    return [j for a in step.args for j in (a if isinstance(a, tuple) else (a,))]


def _remap(step: Step, new_index: dict) -> Step:
    args = tuple(tuple(new_index[j] for j in a) if isinstance(a, tuple) else new_index[a]
                 for a in step.args)
    return dataclasses.replace(step, args=args)


def compact(block: Block) -> Block:
    """``block`` without the steps its outputs do not reach."""
    live, stack = set(), list(block.outputs)
    while stack:
        i = stack.pop()
        if i not in live:
            live.add(i)
            stack.extend(_refs(block.steps[i]))
    keep = sorted(live)
    new_index = {old: new for new, old in enumerate(keep)}
    steps = [_remap(block.steps[i], new_index) for i in keep]
    return Block(steps, [new_index[i] for i in block.outputs])


def _replace_uses(block: Block, old: int, new: int) -> Block:
    """Every use of step ``old`` (and the outputs) reads step ``new`` instead."""
    mapping = {i: i for i in range(len(block.steps))}
    mapping[old] = new
    steps = [_remap(s, mapping) if k > new else s for k, s in enumerate(block.steps)]
    return Block(steps, [mapping[i] for i in block.outputs])


def _candidates(block: Block):
    """Smaller variants of ``block``, most promising first."""
    if len(block.outputs) > 1:
        for o in block.outputs:
            yield Block(list(block.steps), [o])
    for i, s in enumerate(block.steps):  # an earlier value as the output: what used it goes
        if s.kind not in ("param", "const") and i not in block.outputs:
            yield Block(list(block.steps), [i])
    for i in range(len(block.steps) - 1, -1, -1):
        s = block.steps[i]
        if s.kind in ("param", "const") or not isinstance(s.type, TensorType):
            continue
        cut = list(block.steps)
        cut[i] = Step("param", s.type, s.value, name=f"c{i}")
        yield Block(cut, list(block.outputs))
    for i, s in enumerate(block.steps):
        if s.kind != "call":
            continue
        for j in sorted(set(_refs(s))):
            if block.steps[j].type == s.type:
                yield _replace_uses(block, i, j)
    if any(s.let for s in block.steps):
        yield Block([dataclasses.replace(s, let=False) for s in block.steps],
                    list(block.outputs))
    for i, s in enumerate(block.steps):
        if s.kind == "param" and isinstance(s.type, TensorType) and s.type.is_static:
            steps = list(block.steps)
            steps[i] = Step("const", s.type, s.value)
            yield Block(steps, list(block.outputs))


def size(block: Block) -> tuple:
    """Ops, then steps, then lets, then inputs: what "smaller" means."""
    steps = block.steps
    return (sum(s.kind not in ("param", "const") for s in steps), len(steps),
            sum(s.let for s in steps), sum(s.kind == "param" for s in steps))


def shrink(block: Block, still_fails, budget: int = 200) -> Block:
    """The smallest variant of ``block`` found for which ``still_fails(variant)`` holds
    (``budget`` bounds the number of variants tried)."""
    best = compact(block)
    tried = 0
    progress = True
    while progress and tried < budget:
        progress = False
        for cand in _candidates(best):
            cand = compact(cand)
            if size(cand) >= size(best):
                continue
            tried += 1
            if still_fails(cand):
                best, progress = cand, True
                break
            if tried >= budget:
                break
    return best
