"""Inputs and outputs on the command line: ``--inputs in.npz`` checked against the
model's inputs, missing ones filled (``--fill``), outputs summarised and saved.

Every problem is a ``CommandError`` naming the input and what was expected vs found,
before anything runs.
"""

from __future__ import annotations

import os

import numpy as np

from .console import Console
from .runners import CommandError, InputSpec

FILLS = ("random", "zeros", "ones")


def read_npz(path: str | os.PathLike, option: str = "--inputs") -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` file (no pickle)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except FileNotFoundError:
        raise CommandError(f"{option} {path}: not found") from None
    except (OSError, ValueError, EOFError) as exc:
        raise CommandError(f"{option} {path}: not a .npz file of arrays: {exc}") from None


def _text(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def check_given(specs: list[InputSpec], given: dict[str, np.ndarray]) -> dict[str, int]:
    """Check the given arrays' names, dtypes and static dims; returns the size each
    dynamic dim name takes (one name is one size)."""
    names = [s.name for s in specs]
    for key in given:
        if key not in names:
            raise CommandError(f"--inputs: the model has no input named {key!r}; its inputs "
                               f"are {', '.join(names) or 'none'}")
    sizes: dict[str, int] = {}
    for spec in specs:
        if spec.name not in given:
            continue
        a = given[spec.name]
        want = f"{spec.dtype} {spec.shape_text()}"
        found = f"{a.dtype.name} {_text(a.shape)}"
        if a.dtype.name != spec.dtype or a.ndim != len(spec.shape):
            raise CommandError(f"--inputs: input {spec.name}: expected {want}, found {found}")
        for d, n in zip(spec.shape, a.shape):
            if isinstance(d, int) and d != n:
                raise CommandError(f"--inputs: input {spec.name}: expected {want}, found "
                                   f"{found}")
            if isinstance(d, str) and d != "?" and sizes.setdefault(d, n) != n:
                raise CommandError(f"--inputs: input {spec.name}: dim {d} is {sizes[d]} in "
                                   f"another input, {n} here")
    return sizes


def fill(spec: InputSpec, how: str, sizes: dict[str, int], rng) -> np.ndarray:
    """A value for an input not given: random (floats normal, integers 0 or 1: always
    valid indices), zeros or ones. Dynamic dims need a size from ``sizes``."""
    shape = []
    for d in spec.shape:
        if isinstance(d, int):
            shape.append(d)
        elif d in sizes:
            shape.append(sizes[d])
        else:
            raise CommandError(
                f"input {spec.name} {spec.shape_text()} has dynamic dims: give its shape "
                f"with --input-shapes \"{spec.name}:[...]\" or its value with --inputs")
    try:
        dtype = np.dtype(spec.dtype)
    except TypeError:
        raise CommandError(f"input {spec.name} is a {spec.dtype}, which --fill cannot "
                           f"make: give it with --inputs") from None
    if how == "zeros":
        return np.zeros(shape, dtype)
    if how == "ones":
        return np.ones(shape, dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 2, size=shape).astype(dtype)


def resolve(specs: list[InputSpec], given: dict[str, np.ndarray], how: str | None,
            shapes: dict | None = None, console: Console | None = None, seed: int = 0
            ) -> dict[str, np.ndarray]:
    """Every input's value: given, else filled ``how`` (``None``: missing is an error).
    ``shapes`` (from ``--input-shapes``) sizes dynamic dims of filled inputs."""
    sizes = check_given(specs, given)
    for name, dims in (shapes or {}).items():
        spec = next((s for s in specs if s.name == name), None)
        if spec is not None and len(dims) == len(spec.shape):
            for d, n in zip(spec.shape, dims):
                if isinstance(d, str) and isinstance(n, int):
                    sizes.setdefault(d, n)
    missing = [s for s in specs if s.name not in given]
    if missing and how is None:
        raise CommandError(f"inputs not given: {', '.join(s.name for s in missing)}; pass "
                           f"them with --inputs or fill them with --fill random|zeros|ones")
    rng = np.random.default_rng(seed)
    values = dict(given)
    for spec in missing:
        values[spec.name] = fill(spec, how, sizes, rng)
        if console is not None:
            console.step(f"input {spec.name}: {how} {_text(values[spec.name].shape)}")
    return {s.name: values[s.name] for s in specs}


def summarise(console: Console, outputs: list[np.ndarray], top: int) -> None:
    """Each output's shape, dtype and range; the top classes of a classifier's output."""
    rows = []
    for i, a in enumerate(outputs):
        numeric = a.size and a.dtype.kind in "fiub"
        stats = (f"{a.min():.4g}", f"{a.max():.4g}", f"{a.astype('float64').mean():.4g}") \
            if numeric else ("", "", "")
        rows.append([f"output {i}", _text(a.shape), a.dtype.name, *stats])
    console.table(["output", "shape", "dtype", "min", "max", "mean"], rows)
    for i, a in enumerate(outputs):
        if top > 0 and a.ndim == 2 and a.shape[1] >= 2 and a.dtype.kind == "f":
            k = min(top, a.shape[1])
            for r in range(min(a.shape[0], 4)):
                best = np.argsort(-a[r], kind="stable")[:k]
                ranked = ", ".join(f"{c} ({a[r, c]:.4g})" for c in best)
                console.print(f"output {i} row {r}: top {k}: {ranked}")


def save_npz(path: str | os.PathLike, outputs: list[np.ndarray]) -> None:
    np.savez(path, **{f"output_{i}": a for i, a in enumerate(outputs)})


__all__ = ["FILLS", "check_given", "fill", "read_npz", "resolve", "save_npz", "summarise"]
