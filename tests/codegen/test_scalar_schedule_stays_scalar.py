"""A schedule without simd (``vectorize=False``, a point of the tuner's space) compiles
its kernel with gcc's loop vectoriser off (``RL_SCALAR``): gcc 12.2 vectorised the output
loop of a padded NWC avg_pool1d of 3 channels kept in a row of double accumulators, if-
converted its padding guard, and dropped the window's first tap (fuzz seed 34284)."""

import shutil
from pathlib import Path

import numpy as np
import pytest

import relayir as relay
from relayir.testing.fuzz_corpus import read_case
from relayir.testing.fuzz_exec import check
from relayir.testing.fuzz_schedules import RandomSchedules, replay

needs_cc = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                              reason="needs a C compiler")
CORPUS = Path(__file__).resolve().parents[1] / "fuzz_corpus"
PAIRS = [("graph", "cpu", 3), ("vm", "cpu", 3)]
SCALAR = {"parallel": True, "parallel_collapse": 1, "parallel_min_work": 1024,
          "reduce_inner": "spatial", "unroll": 4, "vectorize": False}


class _Every(RandomSchedules):
    """The same config for every kernel."""

    def __init__(self, config):
        super().__init__(0)
        self.config = config

    def _draw(self, fn, tgt):
        return self.config


def _pool(kind, channels, padding):
    x = relay.var("x", shape=(1, 4, channels))
    if kind == "avg":
        y = relay.nn.avg_pool1d(x, pool_size=(2,), padding=padding, layout="NWC",
                                ceil_mode=True, count_include_pad=True)
    else:
        y = relay.nn.max_pool1d(x, pool_size=(2,), padding=padding, layout="NWC",
                                ceil_mode=True)
    return relay.IRModule.from_expr(relay.Function([x], y))


@needs_cc
@pytest.mark.parametrize("kind", ["avg", "max"])
@pytest.mark.parametrize("channels", [1, 3, 5])
@pytest.mark.parametrize("padding", [(1, 1), (1, 0), (2, 2)])
def test_a_padded_pool_under_a_scalar_schedule_agrees(kind, channels, padding):
    data = np.random.default_rng(channels).standard_normal((1, 4, channels)).astype("f")
    mod = _pool(kind, channels, padding)
    assert check(mod, [data], PAIRS, schedules=_Every(SCALAR), pass_config={}) == []


@needs_cc
def test_a_scalar_schedule_marks_its_kernel_and_a_simd_one_does_not():
    mod = _pool("avg", 3, (1, 1))
    sources = []
    for vectorize in (False, True):
        with relay.transform.PassContext(opt_level=3), _Every({**SCALAR,
                                                              "vectorize": vectorize}):
            sources.append(relay.build(mod, "cpu").get_lib().get_source())
    assert "RL_SCALAR int32_t" in sources[0]
    assert "RL_SCALAR int32_t" not in sources[1]


@needs_cc
def test_the_reported_program_agrees():
    mod, inputs, info = read_case(CORPUS / "fixed_nwc_avg_pool1d_scalar_schedule.relay")
    assert info["status"] == "fixed"
    assert check(mod, inputs, PAIRS, **replay(info)) == []
