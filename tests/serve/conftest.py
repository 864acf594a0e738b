"""Compiled MLP artifacts made once per session (graph at several batch sizes, AOT, a VM
with a dynamic batch dim); helpers in ``serve_fixtures.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from serve_fixtures import HAS_CC, TARGET, mlp

import relayir
from relayir.ir.types import Any


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory) -> dict[str, Path]:
    """``graph_b1``, ``graph_b2``, ``graph_b4``, ``graph_b8``, ``vm`` (dynamic batch) and,
    with a C compiler, ``aot_b1``: files as ``relayir compile`` writes them."""
    folder = tmp_path_factory.mktemp("artifacts")
    out = {}
    for b in (1, 2, 4, 8):
        mod, params, _ = mlp(b)
        relayir.runtime.wrap(relayir.build(mod, target=TARGET, params=params)).save(
            folder / f"graph_b{b}.relayir")
        out[f"graph_b{b}"] = folder / f"graph_b{b}.relayir"
    mod, params, _ = mlp(Any())
    relayir.vm.compile(mod, target=TARGET, params=params).save(folder / "vm.relayir")
    out["vm"] = folder / "vm.relayir"
    if HAS_CC:
        mod, params, _ = mlp(1)
        aot = relayir.build(mod, target="cpu", params=params, executor="aot")
        relayir.runtime.wrap(aot).save(folder / "aot_b1.relayir")
        out["aot_b1"] = folder / "aot_b1.relayir"
    return out


@pytest.fixture(scope="session")
def mlp_params():
    return mlp(1)[1]
