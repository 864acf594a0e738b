"""What the AOT executor's tests share: builds of one module for both static executors
and the bit-for-bit comparison of their outputs."""

from types import SimpleNamespace

import numpy as np
import pytest

import relayir as relay
from relayir.codegen import has_compiler
from relayir.runtime.executor import AotModule


def pytest_collection_modifyitems(config, items):
    """Every AOT test compiles C: skip them all where there is no C compiler."""
    if not has_compiler():
        skip = pytest.mark.skip(reason="no C compiler on this machine")
        for item in items:
            if "tests/aot/" in str(item.fspath).replace("\\", "/"):
                item.add_marker(skip)


@pytest.fixture
def round_trip_byte_limit():
    """Models here bind their weights; the root conftest's print → parse round trip of
    every typed module is kept to modules with small constants (as in tests/backend)."""
    return 1 << 16


def build_both(mod, params=None, **knobs):
    """``(graph factory, aot factory)`` of one module at opt level 3 on the cpu target."""
    with relay.transform.PassContext(opt_level=3):
        graph = relay.build(mod, target="cpu", params=params)
        aot = relay.build(mod, target="cpu", params=params, executor="aot", **knobs)
    return graph, aot


def run_graph(lib, inputs: dict) -> list[np.ndarray]:
    gm = relay.graph_executor.GraphModule(lib)
    gm.run(**inputs)
    return [gm.get_output(i) for i in range(gm.get_num_outputs())]


def run_aot(lib, inputs: dict) -> list[np.ndarray]:
    m = AotModule(lib)
    m.run(**inputs)
    return [m.get_output(i) for i in range(m.get_num_outputs())]


def assert_bitwise_equal(got: list, want: list) -> None:
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, (i, g.dtype, w.dtype, g.shape, w.shape)
        assert g.tobytes() == w.tobytes(), f"output {i} differs: max |diff| " \
            f"{np.max(np.abs(g.astype('float64') - w.astype('float64')), initial=0)}"


def check_equal(mod, params, inputs, **knobs):
    """Build both, run both, assert equal bit for bit; returns the two factories."""
    graph, aot = build_both(mod, params, **knobs)
    assert_bitwise_equal(run_aot(aot, inputs), run_graph(graph, inputs))
    return graph, aot


@pytest.fixture
def aot():
    """The helpers above, for the test files (which cannot import a conftest)."""
    return SimpleNamespace(build_both=build_both, run_graph=run_graph, run_aot=run_aot,
                           assert_bitwise_equal=assert_bitwise_equal, check_equal=check_equal)
