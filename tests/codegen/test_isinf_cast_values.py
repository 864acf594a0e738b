"""``isinf``/``isnan``/``isfinite`` give 0 or 1 in the generated C: C99 promises only
"nonzero", and glibc's ``isinf`` gives -1 for -inf, which a cast of the bool to float
read as -1.0 (found by an independent fuzzer at opt level 3)."""

import shutil

import numpy as np
import pytest

import relayir as relay

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                reason="needs a C compiler")

X = np.array([-np.inf, np.inf, 1.0, np.nan, -0.0, -3.0], "float32")


@pytest.mark.parametrize("executor", ["graph", "vm", "aot"])
@pytest.mark.parametrize("test", ["isinf", "isnan", "isfinite"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_the_bool_of_a_float_test_casts_to_0_or_1(executor, test, dtype):
    x = relay.var("x", shape=X.shape, dtype="float32")
    body = relay.cast(getattr(relay, test)(x), dtype)
    mod = relay.IRModule.from_expr(relay.Function([x], body))
    want = getattr(np, test)(X).astype(dtype)
    with relay.transform.PassContext(opt_level=3):
        got = relay.create_executor(executor, mod=mod, target="cpu").evaluate()(X)
    np.testing.assert_array_equal(np.asarray(got), want)
