"""FoldConstant folds what a static type already says: ``shape_of`` of a tensor whose
extents are all known (as TVM's FoldConstant does); a dynamic extent stays."""

from __future__ import annotations

import numpy as np

from relayir.ir.expr import Constant
from relayir.ir.structural import assert_structural_equal
from relayir.testing.pass_check import assert_same_results, evaluate, parse
from relayir.transform.fold_constant import FoldConstant


def test_shape_of_a_static_tensor_becomes_its_shape():
    before = parse("""def @main(%x: Tensor[(8, 9, 10), float32], %y: Tensor[(8, 9, 10), float32]) {
  shape_of(add(%x, %y), dtype="int32")
}""")
    after = FoldConstant()(before)
    body = after["main"].body
    assert type(body) is Constant and body.data.dtype == np.int32
    assert body.data.tolist() == [8, 9, 10]
    x = np.zeros((8, 9, 10), "float32")
    assert_same_results(evaluate(before, [x, x]), evaluate(after, [x, x]), exact=True)


def test_a_dynamic_extent_keeps_shape_of_and_the_value_feeds_on():
    before = parse("""def @main(%x: Tensor[(?, 3), float32]) {
  shape_of(%x)
}""")
    assert_structural_equal(FoldConstant()(before), before)
    folded = FoldConstant()(parse("""def @main(%x: Tensor[(2, 3), float32]) {
  cast(shape_of(%x), dtype="float32")
}"""))
    assert type(folded["main"].body) is Constant
    assert folded["main"].body.data.tolist() == [2.0, 3.0]
