"""FuseOps: input text -> expected text for each fusion rule, then semantics on random
programs and ResNet-18, the 100,000-op chain, and DefuseOps round trips."""

import pytest

import relayir as relay
from relayir.ir.functor import post_order
from relayir.testing.pass_check import assert_same_results, evaluate
from relayir.testing.random_programs import random_program
from relayir.transform import InferType, PassContext, Sequential, get_pass
from relayir.transform.fuse_ops import DefuseOps, FuseOps, count_primitive_functions


def fuse(text_or_mod, opt_level=2, fuse_opt_level=-1, **config):
    mod = relay.parse(text_or_mod) if isinstance(text_or_mod, str) else text_or_mod
    with PassContext(opt_level=opt_level, config=config):
        return FuseOps(fuse_opt_level)(mod)


def check(before, after, **kwargs):
    out = fuse(before, **kwargs)
    relay.assert_structural_equal(out, InferType()(relay.parse(after)))
    assert all(n.has_type for n in post_order(out["main"])), "FuseOps left an untyped node"
    relay.check_well_formed(out["main"])
    relay.assert_structural_equal(DefuseOps()(out), InferType()(relay.parse(before)))
    return out


def test_conv2d_bias_relu_is_one_group():
    out = check(
        """
        def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],
                  %b: Tensor[(4, 1, 1), float32]) {
          %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
          %1 = add(%0, %b);
          nn.relu(%1)
        }
        """,
        """
        def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],
                  %b: Tensor[(4, 1, 1), float32]) {
          %20 = fn (%p0: Tensor[(1, 3, 8, 8), float32], %p1: Tensor[(4, 3, 3, 3), float32],
                   %p2: Tensor[(4, 1, 1), float32], Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {
            %0 = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1]);
            %1 = add(%0, %p2);
            nn.relu(%1)
          };
          %20(%x, %w, %b)
        }
        """)
    assert count_primitive_functions(out) == 1
    assert "Primitive=1" in out.astext()


def test_conv2d_diamond_and_two_anchors():
    """TVM's test_conv2d_fuse: the diamond after the first conv2d fuses into it; of the
    two conv2ds meeting at an add, only the first (in graph order) takes the add."""
    check(
        """
        def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 3, 3), float32],
                  %w2: Tensor[(4, 4, 1, 1), float32], %w3: Tensor[(4, 4, 3, 3), float32]) {
          %0 = add(%x, 1f);
          %1 = nn.conv2d(%0, %w1, padding=[1, 1, 1, 1]);
          %2 = add(1f, %1);
          %3 = add(%1, %2);
          %4 = nn.conv2d(%3, %w2);
          %5 = nn.conv2d(%3, %w3, padding=[1, 1, 1, 1]);
          add(%4, %5)
        }
        """,
        """
        def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 3, 3), float32],
                  %w2: Tensor[(4, 4, 1, 1), float32], %w3: Tensor[(4, 4, 3, 3), float32]) {
          %20 = fn (%p0: Tensor[(1, 4, 8, 8), float32],
              Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {
            add(%p0, 1f)
          };
          %30 = %20(%x);
          %21 = fn (%p0: Tensor[(1, 4, 8, 8), float32], %p1: Tensor[(4, 4, 3, 3), float32],
                    Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {
            %0 = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1]);
            %1 = add(1f, %0);
            add(%0, %1)
          };
          %31 = %21(%30, %w1);
          %22 = fn (%p0: Tensor[(1, 4, 8, 8), float32], %p1: Tensor[(4, 4, 3, 3), float32],
                    Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {
            nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1])
          };
          %32 = %22(%31, %w3);
          %23 = fn (%p0: Tensor[(1, 4, 8, 8), float32], %p1: Tensor[(4, 4, 1, 1), float32],
                    %p2: Tensor[(1, 4, 8, 8), float32],
                        Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {
            %0 = nn.conv2d(%p0, %p1);
            add(%0, %p2)
          };
          %23(%31, %w2, %32)
        }
        """)


def test_dense_bias_add_relu():
    check(
        """
        def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32],
                  %b: Tensor[(4), float32]) {
          %0 = nn.dense(%x, %w);
          %1 = nn.bias_add(%0, %b);
          nn.relu(%1)
        }
        """,
        """
        def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32],
                  %b: Tensor[(4), float32]) {
          %20 = fn (%p0: Tensor[(2, 8), float32], %p1: Tensor[(4, 8), float32],
                   %p2: Tensor[(4), float32],
                   Primitive=1) -> Tensor[(2, 4), float32] {
            %0 = nn.dense(%p0, %p1);
            %1 = nn.bias_add(%0, %p2);
            nn.relu(%1)
          };
          %20(%x, %w, %b)
        }
        """)


def test_elementwise_diamond_fuses_whole():
    check(
        """
        def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3), float32]) {
          %0 = exp(%x);
          %1 = negative(%0);
          %2 = add(%0, %y);
          %3 = tanh(%2);
          %4 = multiply(%1, %3);
          sqrt(%4)
        }
        """,
        """
        def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3), float32]) {
          %20 = fn (%p0: Tensor[(2, 3), float32], %p1: Tensor[(3), float32], Primitive=1)
                   -> Tensor[(2, 3), float32] {
            %0 = exp(%p0);
            %1 = negative(%0);
            %2 = add(%0, %p1);
            %3 = tanh(%2);
            %4 = multiply(%1, %3);
            sqrt(%4)
          };
          %20(%x, %y)
        }
        """)


def test_diamond_through_an_opaque_op_does_not_fuse():
    """exp's post-dominator is the add, but one path crosses softmax: no fusion."""
    check(
        """
        def @main(%x: Tensor[(2, 3), float32]) {
          %0 = exp(%x);
          %1 = nn.softmax(%0);
          add(%0, %1)
        }
        """,
        """
        def @main(%x: Tensor[(2, 3), float32]) {
          %20 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(2, 3), float32] {
            exp(%p0)
          };
          %0 = %20(%x);
          %21 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(2, 3), float32] {
            nn.softmax(%p0)
          };
          %22 = fn (%p0: Tensor[(2, 3), float32], %p1: Tensor[(2, 3), float32], Primitive=1)
                    -> Tensor[(2, 3), float32] {
            add(%p0, %p1)
          };
          %22(%0, %21(%0))
        }
        """)


def test_injective_chain_fuses_with_its_producer_and_consumer():
    check(
        """
        def @main(%x: Tensor[(2, 3, 4), float32]) {
          %0 = add(%x, 1f);
          %1 = reshape(%0, newshape=[4, 6]);
          %2 = transpose(%1, axes=[1, 0]);
          %3 = strided_slice(%2, begin=[0, 0], end=[3, 4]);
          exp(%3)
        }
        """,
        """
        def @main(%x: Tensor[(2, 3, 4), float32]) {
          %20 = fn (%p0: Tensor[(2, 3, 4), float32], Primitive=1) -> Tensor[(3, 4), float32] {
            %0 = add(%p0, 1f);
            %1 = reshape(%0, newshape=[4, 6]);
            %2 = transpose(%1, axes=[1, 0]);
            %3 = strided_slice(%2, begin=[0, 0], end=[3, 4]);
            exp(%3)
          };
          %20(%x)
        }
        """)


def test_split_projections_fuse_with_their_consumers():
    """TVM's test_fuse_tuple_get_elemwise: dense stays alone (its consumer is injective),
    split, its projections and the elementwise tail are one group."""
    check(
        """
        def @main(%x: Tensor[(1, 4), float32], %w: Tensor[(6, 4), float32]) {
          %0 = nn.dense(%x, %w);
          %1 = split(%0, indices_or_sections=3, axis=1);
          %2 = sigmoid(%1.0);
          %3 = tanh(%1.1);
          %4 = exp(%1.2);
          %5 = multiply(%3, %4);
          add(%2, %5)
        }
        """,
        """
        def @main(%x: Tensor[(1, 4), float32], %w: Tensor[(6, 4), float32]) {
          %20 = fn (%p0: Tensor[(1, 4), float32], %p1: Tensor[(6, 4), float32], Primitive=1)
                    -> Tensor[(1, 6), float32] {
            nn.dense(%p0, %p1)
          };
          %21 = fn (%p0: Tensor[(1, 6), float32], Primitive=1) -> Tensor[(1, 2), float32] {
            %1 = split(%p0, indices_or_sections=3, axis=1);
            %2 = sigmoid(%1.0);
            %3 = tanh(%1.1);
            %4 = exp(%1.2);
            %5 = multiply(%3, %4);
            add(%2, %5)
          };
          %21(%20(%x, %w))
        }
        """)


def test_group_outputs_a_projection_or_a_tuple():
    """A projection ending a group is the function's result (TVM's test_tuple_get_root);
    a tuple-valued op ending a group makes the function return the tuple."""
    check(
        """
        def @main(%x: Tensor[(1, 6), float32], %w: Tensor[(2, 2), float32],
                  %z: Tensor[(2, 4), float32]) {
          %0 = split(%x, indices_or_sections=3, axis=1);
          %1 = nn.dense(%0.0, %w);
          %2 = exp(%z);
          %3 = split(%2, indices_or_sections=2, axis=1);
          (%1, %3)
        }
        """,
        """
        def @main(%x: Tensor[(1, 6), float32], %w: Tensor[(2, 2), float32],
                  %z: Tensor[(2, 4), float32]) {
          %20 = fn (%p0: Tensor[(1, 6), float32], Primitive=1) -> Tensor[(1, 2), float32] {
            %0 = split(%p0, indices_or_sections=3, axis=1);
            %0.0
          };
          %21 = fn (%p0: Tensor[(1, 2), float32], %p1: Tensor[(2, 2), float32], Primitive=1)
                    -> Tensor[(1, 2), float32] {
            nn.dense(%p0, %p1)
          };
          %22 = fn (%p0: Tensor[(2, 4), float32], Primitive=1)
                    -> (Tensor[(2, 2), float32], Tensor[(2, 2), float32]) {
            %0 = exp(%p0);
            split(%0, indices_or_sections=2, axis=1)
          };
          (%21(%20(%x), %w), %22(%z))
        }
        """)


def test_reduction_takes_producers_not_its_epilogue():
    """exp (elementwise) fuses into sum as in TVM; the injective transpose before it too,
    as the issue asks (TVM stops injective ops at a reduction); the elementwise ops after
    the reduction form their own group: a reduction never absorbs its consumers."""
    check(
        """
        def @main(%x: Tensor[(2, 3), float32]) {
          %0 = transpose(%x, axes=[1, 0]);
          %1 = exp(%0);
          %2 = sum(%1, axis=[1]);
          %3 = sqrt(%2);
          multiply(%3, 2f)
        }
        """,
        """
        def @main(%x: Tensor[(2, 3), float32]) {
          %20 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(3), float32] {
            %0 = transpose(%p0, axes=[1, 0]);
            %1 = exp(%0);
            sum(%1, axis=[1])
          };
          %21 = fn (%p0: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
            %0 = sqrt(%p0);
            multiply(%0, 2f)
          };
          %21(%20(%x))
        }
        """)


def test_softmax_is_opaque_and_alone():
    check(
        """
        def @main(%x: Tensor[(2, 3), float32]) {
          %0 = exp(%x);
          %1 = nn.softmax(%0);
          negative(%1)
        }
        """,
        """
        def @main(%x: Tensor[(2, 3), float32]) {
          %20 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(2, 3), float32] {
            exp(%p0)
          };
          %21 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(2, 3), float32] {
            nn.softmax(%p0)
          };
          %22 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(2, 3), float32] {
            negative(%p0)
          };
          %22(%21(%20(%x)))
        }
        """)


def test_tuple_and_concatenate():
    """TVM's test_concatenate: max_pool2d stays alone (its consumer is injective); the
    tuple fuses into concatenate and its consumer, then the injective field joins them."""
    check(
        """
        def @main(%x: Tensor[(1, 4, 8, 8), float32], %y: Tensor[(1, 4, 4, 4), float32]) {
          %0 = nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2]);
          %1 = transpose(%0, axes=[0, 1, 3, 2]);
          %2 = (%1, %y);
          %3 = concatenate(%2, axis=1);
          add(%3, 1f)
        }
        """,
        """
        def @main(%x: Tensor[(1, 4, 8, 8), float32], %y: Tensor[(1, 4, 4, 4), float32]) {
          %20 = fn (%p0: Tensor[(1, 4, 8, 8), float32],
              Primitive=1) -> Tensor[(1, 4, 4, 4), float32] {
            nn.max_pool2d(%p0, pool_size=[2, 2], strides=[2, 2])
          };
          %21 = fn (%p0: Tensor[(1, 4, 4, 4), float32], %p1: Tensor[(1, 4, 4, 4), float32],
                    Primitive=1) -> Tensor[(1, 8, 4, 4), float32] {
            %0 = transpose(%p0, axes=[0, 1, 3, 2]);
            %1 = (%0, %p1);
            %2 = concatenate(%1, axis=1);
            add(%2, 1f)
          };
          %21(%20(%x), %y)
        }
        """)


def test_tuple_root_is_not_fused():
    """TVM's test_tuple_root: a tuple that is the result stays a plain tuple."""
    check(
        """
        def @main(%x: Tensor[(1, 4, 8, 8), float32]) {
          %0 = nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2]);
          %1 = transpose(%0, axes=[0, 1, 3, 2]);
          (%1, %x)
        }
        """,
        """
        def @main(%x: Tensor[(1, 4, 8, 8), float32]) {
          %20 = fn (%p0: Tensor[(1, 4, 8, 8), float32],
              Primitive=1) -> Tensor[(1, 4, 4, 4), float32] {
            nn.max_pool2d(%p0, pool_size=[2, 2], strides=[2, 2])
          };
          %21 = fn (%p0: Tensor[(1, 4, 4, 4), float32],
              Primitive=1) -> Tensor[(1, 4, 4, 4), float32] {
            transpose(%p0, axes=[0, 1, 3, 2])
          };
          (%21(%20(%x)), %x)
        }
        """)


CHAIN5 = """
def @main(%x: Tensor[(3), float32]) {
  %0 = exp(%x);
  %1 = negative(%0);
  %2 = tanh(%1);
  %3 = sigmoid(%2);
  abs(%3)
}
"""


def test_max_depth_limits_group_size():
    check(CHAIN5, """
        def @main(%x: Tensor[(3), float32]) {
          %20 = fn (%p0: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
            %0 = exp(%p0);
            negative(%0)
          };
          %21 = fn (%p0: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
            %0 = tanh(%p0);
            sigmoid(%0)
          };
          %22 = fn (%p0: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
            abs(%p0)
          };
          %22(%21(%20(%x)))
        }
        """, **{"relay.FuseOps.max_depth": 2})
    assert count_primitive_functions(fuse(CHAIN5)) == 1
    with pytest.raises(ValueError, match="max_depth"):
        fuse(CHAIN5, **{"relay.FuseOps.max_depth": 0})


def test_opt_level_0_puts_every_op_in_its_own_function():
    text = """
    def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],
              %b: Tensor[(4, 1, 1), float32]) {
      %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
      %1 = add(%0, %b);
      %2 = nn.relu(%1);
      (%2, %0)
    }
    """
    expected = """
    def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],
              %b: Tensor[(4, 1, 1), float32]) {
      %20 = fn (%p0: Tensor[(1, 3, 8, 8), float32], %p1: Tensor[(4, 3, 3, 3), float32],
                Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {
        nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1])
      };
      %0 = %20(%x, %w);
      %21 = fn (%p0: Tensor[(1, 4, 8, 8), float32], %p1: Tensor[(4, 1, 1), float32],
                Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {
        add(%p0, %p1)
      };
      %22 = fn (%p0: Tensor[(1, 4, 8, 8), float32], Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {
        nn.relu(%p0)
      };
      (%22(%21(%0, %b)), %0)
    }
    """
    check(text, expected, opt_level=0)
    check(text, expected, opt_level=3, fuse_opt_level=0)  # the argument wins
    assert count_primitive_functions(fuse(text, opt_level=0)) == 3


def test_control_flow_is_a_fusion_boundary():
    """Nothing fuses across an if, a let or a closure; each region fuses inside itself."""
    check(
        """
        def @main(%x: Tensor[(3), float32], %c: bool) {
          %0 = exp(%x);
          %1 = if (%c) {
            %2 = negative(%0);
            tanh(%2)
          } else {
            abs(%0)
          };
          let %v = add(%1, 1f);
          let %f = fn (%y: Tensor[(3), float32]) {
            %3 = multiply(%y, %0);
            sigmoid(%3)
          };
          %4 = %f(%v);
          %5 = negative(%4);
          sqrt(%5)
        }
        """,
        """
        def @main(%x: Tensor[(3), float32], %c: bool) {
          %24 = fn (%p0: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
            exp(%p0)
          };
          %0 = %24(%x);
          %1 = if (%c) {
            %25 = fn (%p0: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
              %2 = negative(%p0);
              tanh(%2)
            };
            %25(%0)
          } else {
            %26 = fn (%p0: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
              abs(%p0)
            };
            %26(%0)
          };
          %27 = fn (%p0: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
            add(%p0, 1f)
          };
          let %v = %27(%1);
          let %f = fn (%y: Tensor[(3), float32]) {
            %28 = fn (%p0: Tensor[(3), float32], %p1: Tensor[(3), float32], Primitive=1)
                     -> Tensor[(3), float32] {
              %3 = multiply(%p0, %p1);
              sigmoid(%3)
            };
            %28(%y, %0)
          };
          %4 = %f(%v);
          %29 = fn (%p0: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
            %5 = negative(%p0);
            sqrt(%5)
          };
          %29(%4)
        }
        """)


def test_match_clauses_are_fusion_boundaries():
    """exp is read by both clauses: it stays outside, its own group; each clause fuses
    inside itself."""
    adt = """
    type Option[A] {
      Some(A),
      None,
    }
    """
    check(adt + """
        def @main(%x: Tensor[(3), float32], %o: Option[Tensor[(3), float32]]) {
          %0 = exp(%x);
          match (%o) {
            Some(%y) => negative(add(%y, %0)),
            None => tanh(%0),
          }
        }
        """, adt + """
        def @main(%x: Tensor[(3), float32], %o: Option[Tensor[(3), float32]]) {
          %20 = fn (%p0: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
            exp(%p0)
          };
          %21 = fn (%p0: Tensor[(3), float32], %p1: Tensor[(3), float32], Primitive=1)
                    -> Tensor[(3), float32] {
            %1 = add(%p0, %p1);
            negative(%1)
          };
          %22 = fn (%p0: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
            tanh(%p0)
          };
          %0 = %20(%x);
          match (%o) {
            Some(%y) => %21(%y, %0),
            None => %22(%0),
          }
        }
        """)


def test_existing_primitive_functions_are_left_alone():
    text = """
    def @main(%x: Tensor[(3), float32]) {
      %20 = fn (%p0: Tensor[(3), float32], Primitive=1) -> Tensor[(3), float32] {
        %0 = exp(%p0);
        negative(%0)
      };
      %1 = %20(%x);
      tanh(%1)
    }
    """
    out = fuse(text)
    assert count_primitive_functions(out) == 2
    again = fuse(out)  # fusing a fused module changes nothing
    relay.assert_structural_equal(again, out)


def test_untyped_input_is_typed_and_pass_is_registered():
    x = relay.var("x", shape=(2, 2))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(relay.negative(x))))
    out = FuseOps()(mod)  # no InferType before: the pass types the module itself
    assert count_primitive_functions(out) == 1
    assert get_pass("FuseOps").name == "FuseOps"
    assert FuseOps().info.required == ("InferType",)
    with PassContext(opt_level=3, disabled_pass=["FuseOps"]):
        skipped = Sequential([FuseOps()])(mod)
    assert count_primitive_functions(skipped) == 0


def test_100k_op_chain_without_recursion():
    x = relay.var("x", shape=(4,))
    y = x
    unary = [relay.exp, relay.negative, relay.tanh, relay.sigmoid]
    for i in range(100_000):
        y = relay.add(y, relay.const(0.5)) if i % 5 == 0 else unary[i % 4](y)
    mod = InferType()(relay.IRModule.from_expr(relay.Function([x], y)))
    out = fuse(mod, **{"relay.FuseOps.max_depth": 256})
    assert count_primitive_functions(out) == (100_000 + 255) // 256  # op calls per group
    sizes = []
    e = out["main"].body
    while isinstance(e, relay.Call) and isinstance(e.op, relay.Function):  # the group chain
        n, inner = 0, e.op.body
        while isinstance(inner, relay.Call):
            n += 1
            inner = inner.args[0]
        sizes.append(n)
        e = e.args[0]
    assert e is x and max(sizes) == 256 and sum(sizes) == 100_000


@pytest.mark.parametrize("seed", range(50))
def test_random_programs_keep_their_meaning(seed):
    mod, inputs = random_program(seed)
    expected = evaluate(mod, inputs)
    for opt_level in (0, 2):
        out = fuse(mod, opt_level=opt_level)
        assert_same_results(evaluate(out, inputs), expected, atol=1e-5)
        relay.assert_structural_equal(DefuseOps()(out), InferType()(mod))


def _simplify_batch_norm(mod):
    """Batch norm into a per-channel multiply/add: SimplifyInference when it is there,
    else the same arithmetic built here."""
    import relayir.transform as T

    simplify = getattr(T, "SimplifyInference", None)
    if simplify is None:
        try:
            from relayir.transform.simplify_inference import SimplifyInference as simplify
        except ImportError:
            simplify = None
    if simplify is not None:
        return Sequential([InferType(), simplify(), InferType()])(mod)

    class BatchNormToAffine(relay.ExprMutator):
        def visit_tuple_getitem(self, t):
            bn = t.tuple_value
            if t.index == 0 and isinstance(bn, relay.Call) and getattr(bn.op, "name", "") == \
                    "nn.batch_norm":
                x, g, b, m, v = (self.visit(a) for a in bn.args)
                scale = relay.rsqrt(v + relay.const(bn.attrs.epsilon)) * g
                shift = b - m * scale
                c = bn.args[1].checked_type.shape[0]
                return (x * relay.reshape(scale, newshape=[c, 1, 1])
                        + relay.reshape(shift, newshape=[c, 1, 1]))
            return super().visit_tuple_getitem(t)

    fn = mod["main"]
    return InferType()(relay.IRModule.from_expr(
        relay.Function(fn.params, BatchNormToAffine().visit(fn.body))))


def test_resnet18_conv2d_groups_hold_their_epilogues():
    from relayir.testing.models import get_workload, make_inputs

    mod, params, _ = get_workload("resnet18", image_size=32)
    # the weights are passed as inputs, not bound: modules stay small to print and check
    inputs = {**make_inputs("resnet18", mod), **params}
    raw = InferType()(mod)
    simple = _simplify_batch_norm(raw)
    with PassContext(opt_level=3):
        raw_fused, fused = FuseOps()(raw), FuseOps()(simple)
    print(f"resnet18: {count_primitive_functions(raw_fused)} primitive functions with batch "
          f"norm, {count_primitive_functions(fused)} once batch norm is simplified")
    for before, after in ((raw, raw_fused), (simple, fused)):
        assert_same_results(evaluate(after, inputs), evaluate(before, inputs), rtol=1e-4,
                            atol=1e-4)

    groups = []
    for node in post_order(fused["main"]):
        if isinstance(node, relay.Function) and node.is_primitive:
            groups.append([n.op.name for n in post_order(node.body)
                           if isinstance(n, relay.Call) and isinstance(n.op, relay.Op)])
    convs = [g for g in groups if "nn.conv2d" in g]
    assert len(convs) == 20 and all(g.count("nn.conv2d") == 1 for g in convs)
    # each conv2d took its batch norm (multiply, add) and its relu, unless it is one of
    # the 3 downsample branches; every relu is in a conv2d group, so the residual adds
    # before them are too
    assert all("multiply" in g and "add" in g for g in convs)
    assert sum("nn.relu" in g for g in convs) == 17
    assert sum(g.count("nn.relu") for g in groups) == 17
