"""ToBasicBlockNormalForm (``let`` only for a node shared between blocks, graph form
inside a block) and check_basic_block_normal_form."""

from __future__ import annotations

import numpy as np
import pytest

from relayir.testing.pass_check import (
    assert_same_results,
    check_pass,
    parse,
    random_inputs,
    results,
    run_pass,
    typed_chain,
)
from relayir.transform import ToBasicBlockNormalForm
from relayir.transform.to_basic_block_normal_form import (
    BasicBlockNormalFormError,
    check_basic_block_normal_form,
)

NESTED_IFS = """
def @main(%c: bool, %d: bool, %y: float32, %z: float32) {
  %0 = add(%z, %z);
  %1 = add(%y, %y);
  if (%c) {
    if (%d) { add(%0, %1) } else { add(3f, %1) }
  } else {
    if (%d) { %0 } else { 1f }
  }
}"""


def test_a_node_shared_by_two_blocks_is_bound_at_their_common_block_and_no_other():
    check_pass(ToBasicBlockNormalForm(), NESTED_IFS, """
def @main(%c: bool, %d: bool, %y: float32, %z: float32) {
  let %z2 = add(%z, %z);
  if (%c) {
    let %y2 = add(%y, %y);
    if (%d) { add(%z2, %y2) } else { add(3f, %y2) }
  } else {
    if (%d) { %z2 } else { 1f }
  }
}""")


def test_the_result_computes_the_same_and_is_in_the_normal_form():
    mod = parse(NESTED_IFS)
    out = run_pass(ToBasicBlockNormalForm(), mod)
    with pytest.raises(BasicBlockNormalFormError, match="add"):
        check_basic_block_normal_form(mod["main"])
    assert check_basic_block_normal_form(out["main"])
    for c in (True, False):
        for d in (True, False):
            inputs = [np.array(c), np.array(d), np.float32(2.5), np.float32(-1.0)]
            assert_same_results(results(out, inputs), results(mod, inputs))


def test_a_graph_inside_one_block_keeps_its_sharing_and_gets_no_let():
    text = """
def @main(%x: Tensor[(2), float32]) {
  %0 = add(%x, %x);
  %1 = multiply(%0, %0);
  subtract(%1, %0)
}"""
    check_pass(ToBasicBlockNormalForm(), text, text, same_text=True)


def test_a_node_of_a_let_body_shared_by_blocks_comes_after_the_variable():
    check_pass(ToBasicBlockNormalForm(), """
def @main(%x: float32, %c: bool) {
  let %v = negative(%x);
  %0 = add(%v, %x);
  if (%c) { %0 } else { multiply(%0, %0) }
}""", """
def @main(%x: float32, %c: bool) {
  let %v = negative(%x);
  let %s = add(%v, %x);
  if (%c) { %s } else { multiply(%s, %s) }
}""")


def test_a_variable_used_from_two_blocks_without_a_let_is_reported():
    mod = parse("""
def @main(%c: bool, %s: float32) {
  if (%c) { %s } else { add(%s, %s) }
}""")
    # %s is the function's parameter: its first use is the body's block, so it is placed
    assert check_basic_block_normal_form(mod["main"])
    body = mod["main"].body
    with pytest.raises(BasicBlockNormalFormError, match="%s"):
        check_basic_block_normal_form(body)  # free, first used in the true branch


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")  # the chain doubles to inf
def test_a_long_chain_is_converted_without_recursion():
    mod = typed_chain("ops", 20_000)
    out = run_pass(ToBasicBlockNormalForm(), mod)
    inputs = random_inputs(mod)
    assert_same_results(results(out, inputs), results(mod, inputs))
