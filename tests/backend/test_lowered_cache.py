"""The lowered-C cache of ``backend.lowering``: a second build of the same static module
skips tir lowering and C rendering, and anything that could change the C misses."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import relayir as relay
import relayir.backend.lowering as lowering
from relayir.codegen import cache
from relayir.runtime.graph_executor import GraphModule

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                reason="needs a C compiler")


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RELAYIR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("RELAYIR_NO_CACHE", raising=False)
    return tmp_path / "cache"


@pytest.fixture
def lowerings(monkeypatch):
    """Counts ``lower_primitive`` calls."""
    calls = []
    original = lowering.lower_primitive

    def counted(fn, name, schedule=None, **kwargs):
        calls.append(name)
        return original(fn, name, schedule, **kwargs)

    monkeypatch.setattr(lowering, "lower_primitive", counted)
    return calls


def _module(scale=2.0):
    x = relay.var("x", shape=(4, 8), dtype="float32")
    w = relay.var("w", shape=(16, 8), dtype="float32")
    y = relay.nn.relu(relay.nn.dense(x, w)) * relay.const(scale, "float32")
    return relay.IRModule.from_expr(relay.Function([x, w], relay.sum(y, axis=1)))


def _run(lib, x, w):
    m = GraphModule(lib)
    m.set_input("x", x)
    m.set_input("w", w)
    m.run()
    return m.get_output(0)


def test_a_second_build_reuses_the_lowered_c(fresh_cache, lowerings):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 8), "float32"), rng.standard_normal((16, 8), "float32")
    first = relay.build(_module(), target="cpu")
    assert lowerings and list((fresh_cache / "lowered").glob("*.json"))
    n = len(lowerings)
    second = relay.build(_module(), target="cpu")
    assert len(lowerings) == n  # nothing lowered again
    assert second.lib.source == first.lib.source
    want = (np.maximum(x @ w.T, 0) * 2).sum(axis=1)
    np.testing.assert_allclose(_run(second, x, w), want, rtol=1e-5)


def test_a_changed_constant_or_damaged_entry_lowers_again(fresh_cache, lowerings):
    relay.build(_module(2.0), target="cpu")
    n = len(lowerings)
    relay.build(_module(3.0), target="cpu")  # same text shape, another constant
    assert len(lowerings) > n
    for entry in (fresh_cache / "lowered").glob("*.json"):
        entry.write_text("{not json")
    n = len(lowerings)
    lib = relay.build(_module(3.0), target="cpu")
    assert len(lowerings) > n
    x, w = np.ones((4, 8), "float32"), np.ones((16, 8), "float32")
    np.testing.assert_allclose(_run(lib, x, w), np.full(4, 16 * 8 * 3, "float32"))


def test_an_edit_of_relayir_changes_the_key(fresh_cache, lowerings, monkeypatch):
    relay.build(_module(), target="cpu")
    n = len(lowerings)
    monkeypatch.setattr(cache, "code_fingerprint", lambda: "edited")
    relay.build(_module(), target="cpu")
    assert len(lowerings) > n


def test_no_cache_means_no_lowered_entries(fresh_cache, lowerings, monkeypatch):
    monkeypatch.setenv("RELAYIR_NO_CACHE", "1")
    relay.build(_module(), target="cpu")
    relay.build(_module(), target="cpu")
    assert not (fresh_cache / "lowered").exists()
