"""The fuzzer's corpus: each shrunk failing program as Relay text, replayed by the tests.

A case is ``NAME.relay`` — a first line ``// fuzz: {json}`` (the seed, the pairs that
disagreed and how, and ``status``: ``"fixed"``, or ``"open"`` with the file a fix
belongs in) then the module's text — and ``NAME.npz``, ``@main``'s inputs in order
(``x0``, ``x1``, ...; saved without pickle).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..ir.module import IRModule
from ..ir.parser import parse

HEADER = "// fuzz: "


def write_case(folder: Path | str, name: str, mod: IRModule, inputs: list, info: dict) -> Path:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.relay"
    path.write_text(HEADER + json.dumps(info, sort_keys=True) + "\n" + mod.astext() + "\n")
    np.savez(folder / f"{name}.npz", **{f"x{k}": np.asarray(x) for k, x in enumerate(inputs)})
    return path


def read_case(path: Path | str) -> tuple[IRModule, list, dict]:
    """A case's module, inputs and header."""
    path = Path(path)
    text = path.read_text()
    first, _, _ = text.partition("\n")
    info = json.loads(first[len(HEADER):]) if first.startswith(HEADER) else {}
    with np.load(path.with_suffix(".npz"), allow_pickle=False) as data:
        inputs = [data[f"x{k}"] for k in range(len(data.files))]
    return parse(text, str(path)), inputs, info


def cases(folder: Path | str) -> list[Path]:
    return sorted(Path(folder).glob("*.relay"))
