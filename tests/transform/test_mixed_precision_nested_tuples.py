"""ToMixedPrecision casts a function's nested tuple result back to its declared dtypes:
an LSTM cell (a local function) returning ``(h, (h, c))`` into its float32 state
parameter still types."""

from __future__ import annotations

import numpy as np

from relayir.testing.pass_check import evaluate, parse
from relayir.transform import InferType, ToMixedPrecision


def test_a_nested_tuple_result_is_cast_back_field_by_field():
    mod = parse("""def @main(%x: Tensor[(2, 4), float32], %w: Tensor[(4, 4), float32]) {
  let %cell = fn (%a: Tensor[(2, 4), float32])
      -> (Tensor[(2, 4), float32], (Tensor[(2, 4), float32], Tensor[(2, 4), float32])) {
    %0 = nn.dense(%a, %w);
    (%0, (%0, tanh(%0)))
  };
  %1 = %cell(%x);
  %2 = %1.1;
  %cell(%2.1)
}""")
    mixed = InferType()(ToMixedPrecision("float16")(mod))
    ret = mixed["main"].checked_type.ret_type
    assert [f.dtype for f in (ret.fields[0], *ret.fields[1].fields)] == ["float32"] * 3
    x = np.random.default_rng(0).standard_normal((2, 4)).astype("float32") * 0.1
    w = np.eye(4, dtype="float32")
    want, got = evaluate(mod, [x, w]), evaluate(mixed, [x, w])
    np.testing.assert_allclose(np.asarray(got[1][1]), np.asarray(want[1][1]), rtol=2e-3,
                               atol=2e-3)


def test_a_global_functions_arguments_are_cast_to_its_parameters():
    mod = parse("""def @double(%a: Tensor[(2, 4), float32]) -> Tensor[(2, 4), float32] {
  add(%a, %a)
}
def @main(%x: Tensor[(2, 4), float32], %w: Tensor[(4, 4), float32]) {
  @double(nn.dense(%x, %w))
}""")
    mixed = InferType()(ToMixedPrecision("float16")(mod))
    x = np.random.default_rng(1).standard_normal((2, 4)).astype("float32")
    w = np.eye(4, dtype="float32")
    np.testing.assert_allclose(np.asarray(evaluate(mixed, [x, w])),
                               np.asarray(evaluate(mod, [x, w])), rtol=2e-3, atol=2e-3)
