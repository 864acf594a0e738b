"""A kernel's local double array is 64-byte aligned: gcc 12.2 stored 16 bytes aligned
into a `double acc[6]` at 8 mod 16 on the stack, and the grouped NWC float64 conv1d
died of SIGSEGV (fuzz seed 33750). Run in a subprocess: a regression is a crash."""

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


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                    reason="needs a C compiler")
def test_a_grouped_nwc_float64_conv1d_runs_and_is_right():
    r = subprocess.run([sys.executable, "-c", REPRO], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-2000:])


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
