"""Zero-size tensors, bfloat16 and float16 through every executor (ONNX models have all
three): constants of them pass common-subexpression elimination (whose hashing used a
buffer view that neither supports), and the VM hands C kernels contiguous arrays even
when a data-dependent op's reference returned a strided view."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay

pytest.importorskip("ml_dtypes")

EXECUTORS = [("debug", "numpy"), ("graph", "numpy"), ("graph", "cpu"), ("vm", "numpy"),
             ("vm", "cpu"), ("aot", "cpu")]


def _with_constant(value: np.ndarray):
    """``x * c + c`` twice (CSE merges the duplicate constants)."""
    x = relay.var("x", shape=value.shape, dtype=value.dtype.name)
    a, b = relay.const(value), relay.const(value.copy())
    body = relay.Tuple([x * a + a, x * b + b])
    return relay.IRModule.from_expr(relay.Function([x], body))


VALUES = {
    "zero-size": np.zeros((0, 3), "float32"),
    "float16": np.array([1.5, -2.0, 0.25], "float16"),
    "bfloat16": np.array([1.5, -2.0, 0.25], "float32").astype("bfloat16"),
}


@pytest.mark.parametrize("kind,target", EXECUTORS, ids=[f"{k}-{t}" for k, t in EXECUTORS])
@pytest.mark.parametrize("name", list(VALUES))
def test_constants_and_inputs_of_every_kind_run(name, kind, target):
    value = VALUES[name]
    mod = relay.transform.InferType()(_with_constant(value))
    with relay.transform.PassContext(opt_level=3):  # EliminateCommonSubexpr included
        if kind == "aot" and name == "bfloat16":  # C has no bfloat16: a clear refusal
            with pytest.raises(relay.Error, match="numpy reference"):
                relay.create_executor(kind, mod, target=target).evaluate()
            return
        run = relay.create_executor(kind, mod, target=target).evaluate()
    out = run(value)
    want = (value.astype("float32") * value.astype("float32") + value.astype("float32"))
    for o in out:
        assert o.shape == value.shape and o.dtype == value.dtype
        np.testing.assert_allclose(o.astype("float32"), want.astype(value.dtype).astype(
            "float32"), rtol=1e-2)


@pytest.mark.parametrize("target", ["numpy", "cpu"])
def test_a_strided_data_dependent_result_feeds_a_c_kernel(target):
    # ONNX NonZero is argwhere transposed: a strided view, then a native kernel reads it
    x = relay.var("x", shape=(2, 3), dtype="float32")
    nz = relay.transpose(relay.dyn.argwhere(relay.not_equal(x, relay.const(0.0))))
    mod = relay.IRModule.from_expr(relay.Function([x], nz + relay.const(1, "int64")))
    run = relay.create_executor("vm", mod, target=target).evaluate()
    data = np.array([[1, 0, 2], [0, 3, 0]], "float32")
    np.testing.assert_array_equal(run(data), np.array(np.nonzero(data)) + 1)
