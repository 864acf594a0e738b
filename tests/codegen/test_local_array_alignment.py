"""A kernel's local arrays of 16 bytes or more are 64-byte aligned: gcc 12.2 moved 16
bytes with an aligned load or store into a stack array at 8 mod 16, and the kernels died
of SIGSEGV: a grouped NWC float64 conv1d (`double acc[6]`, fuzz seed 33750), and a
float32 max_pool3d under a scalar schedule (`float acc[20]` in a kernel with gcc's
optimize attribute, which loses the stack realignment; seed 32872). Run in a
subprocess: a regression is a crash."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

REPRO = """
import numpy as np
import relayir as relay
x = relay.var("x", shape=(1, 6, 2), dtype="float64")
w = relay.var("w", shape=(2, 1, 6), dtype="float64")
body = relay.nn.conv1d(x, w, strides=[2], groups=2, channels=6, data_layout="NWC")
mod = relay.IRModule.from_expr(relay.Function([x, w], body))
rng = np.random.default_rng(0)
a, b = rng.standard_normal((1, 6, 2)), rng.standard_normal((2, 1, 6))
got = relay.runtime.wrap(relay.build(mod, target="cpu")).run([a, b])[0]
want = relay.create_executor("debug", mod=mod).evaluate()(a, b)
np.testing.assert_allclose(got, want, rtol=1e-12)
print("ok")
"""


needs_cc = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                              reason="needs a C compiler")


def _runs_ok(source: str) -> None:
    r = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-2000:])


@needs_cc
def test_a_grouped_nwc_float64_conv1d_runs_and_is_right():
    _runs_ok(REPRO)


SCALAR_POOL = """
import numpy as np
import relayir as relay
from relayir.autotune.space import ConfigSpace
from relayir.autotune.task import Task
from relayir.backend.lowering import TunedSchedules
from relayir.backend.target import Target


class Scalar(TunedSchedules):  # every kernel one thread, not vectorised (RL_SCALAR)
    def schedule_for(self, fn, target):
        config = {"parallel": False, "parallel_collapse": 3, "parallel_min_work": 8192,
                  "vectorize": False, "unroll": 0, "reduce_inner": "auto"}
        return ConfigSpace(Task("t", fn, Target.parse(target))).schedule(config)


x = relay.var("x", shape=(2, 3, 1, 6, 5))
body = relay.nn.max_pool3d(x, pool_size=(1, 3, 1), strides=(3, 1, 1), dilation=(1, 1, 2),
                           ceil_mode=True)
mod = relay.IRModule.from_expr(relay.Function([x], body))
with relay.transform.PassContext(opt_level=3), Scalar():
    lib = relay.build(mod, target="cpu")
assert "RL_SCALAR int32_t" in lib.get_lib().get_source()
a = np.random.default_rng(0).standard_normal((2, 3, 1, 6, 5)).astype("float32")
got = relay.runtime.wrap(lib).run([a])[0]
want = relay.create_executor("debug", mod=mod).evaluate()(a)
np.testing.assert_array_equal(got, want)
print("ok")
"""


@needs_cc
def test_a_max_pool3d_under_a_scalar_schedule_runs_and_is_right():
    _runs_ok(SCALAR_POOL)


def test_local_double_arrays_are_declared_aligned():
    import relayir as relay

    x = relay.var("x", shape=(1, 6, 2), dtype="float64")
    w = relay.var("w", shape=(2, 1, 6), dtype="float64")
    body = relay.nn.conv1d(x, w, strides=[2], groups=2, channels=6, data_layout="NWC")
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x, w], body)), target="cpu")
    source = lib.get_lib().get_source()
    # the array's extent may differ by ISA (AVX2 or AVX-512): only its alignment is checked
    assert re.search(r"double \w+\[\d+\] __attribute__\(\(aligned\(64\)\)\);", source), \
        source[-800:]
