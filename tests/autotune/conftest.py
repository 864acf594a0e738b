"""Tiny tuning tasks (a dense + relu of a few thousand multiply-adds: milliseconds to
compile and measure) and quick measurement options, so tuning tests take seconds."""

from __future__ import annotations

import pytest

import relayir as relay
from relayir import autotune
from relayir.codegen.compiler import CompilerNotFoundError, find_compiler


def tiny_dense(rows: int = 8, width: int = 32, twice: bool = False):
    """``relu(dense(x, w))`` (``twice``: applied twice, the same kernel called twice)."""
    x = relay.var("x", shape=(rows, width))
    w = relay.var("w", shape=(width, width))
    y = relay.nn.relu(relay.nn.dense(x, w))
    if twice:
        y = relay.nn.relu(relay.nn.dense(y, w))
    return relay.IRModule.from_expr(relay.Function([x, w], y)), None


@pytest.fixture(scope="session")
def tiny_model():
    """``tiny_model(rows=8, width=32, twice=False) -> (mod, params)``."""
    return tiny_dense


@pytest.fixture(scope="session")
def needs_cc():
    try:
        find_compiler()
    except CompilerNotFoundError:
        pytest.skip("tuning measures generated C: no C compiler")


@pytest.fixture
def quick_runner(needs_cc):
    runner = autotune.LocalRunner(repeat=2, min_repeat_ms=1.0, timeout=20.0)
    yield runner
    runner.close()


@pytest.fixture(scope="session")
def dense_task(needs_cc):
    mod, params = tiny_dense()
    (task,) = autotune.extract_tasks(mod, params, "cpu")
    return task
