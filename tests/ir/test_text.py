"""The Relay text format: print → parse round trips, hand-written text, errors, scale.

Every program is checked three ways: ``parse(astext(x))`` is structurally equal to
``x``, printing the parsed program gives the same text again, and (where it matters)
the parsed graph shares exactly the nodes the text names once.
"""

from __future__ import annotations

import dataclasses
import random
import time

import numpy as np
import pytest

import relayir as relay
from relayir import ParseError
from relayir.ir.adt import (
    Clause,
    Constructor,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from relayir.ir.expr import Call, Op, RefCreate, RefRead, RefWrite
from relayir.ir.op import Attrs, OpPattern
from relayir.ir.structural import assert_structural_equal
from relayir.ir.types import (
    Any,
    FuncType,
    GlobalTypeVar,
    RefType,
    SymbolicDim,
    TensorType,
    TupleType,
    TypeCall,
    TypeVar,
)


def round_trip(node, map_free_vars=False):
    text = relay.astext(node)
    if isinstance(node, relay.IRModule):
        parsed = relay.parse(text)
    else:
        parsed = relay.parse_expr(text)
    assert_structural_equal(parsed, node, map_free_vars=map_free_vars)
    assert relay.astext(parsed) == text  # printing is deterministic and stable
    return parsed


def module(expr):
    return relay.IRModule.from_expr(expr)


def call(f, *args):
    return Call(f, tuple(args))


@dataclasses.dataclass(frozen=True)
class _ToyAttrs(Attrs):
    units: int | None = None
    rate: float = 0.5
    layout: str = "NCHW"
    flag: bool = False
    pads: tuple = (0, 0)
    nested: tuple = ()


@pytest.fixture
def toy_op(monkeypatch):
    """An op with every kind of attribute, registered only for the test."""
    op = Op("text_test.toy", 1, ("data",), _ToyAttrs, None, OpPattern.OPAQUE, None)
    monkeypatch.setitem(Op.REGISTRY, op.name, op)
    return op


# ---------------------------------------------------------------- the format itself


def _brief_program():
    x = relay.var("x", shape=(2, 2), dtype="float32")
    w = relay.var("w", shape=(2, 2), dtype="float32")
    h = relay.var("h")
    call = relay.negative(relay.add(x, w))
    return module(relay.Function([x, w], relay.Let(h, call, h * relay.const(2.0))))


def test_print_reads_well():
    assert str(_brief_program()) == (
        '#[version = "0.0.5"]\n'
        "def @main(%x: Tensor[(2, 2), float32], %w: Tensor[(2, 2), float32]) {\n"
        "  %0 = add(%x, %w);\n"
        "  let %h = negative(%0);\n"
        "  multiply(%h, 2f)\n"
        "}"
    )
    round_trip(_brief_program())


def test_checked_types_go_to_comments():
    mod = relay.transform.InferType()(_brief_program())
    ty = "/* ty=Tensor[(2, 2), float32] */"
    assert mod.astext().splitlines()[2:5] == [
        f"  %0 = add(%x, %w) {ty};",
        f"  let %h = negative(%0) {ty};",
        f"  multiply(%h, 2f) {ty}",
    ]
    assert ty not in mod.astext(show_types=False)
    assert_structural_equal(relay.parse(mod.astext()), mod)


def test_nn_program_if_available():
    if not (hasattr(relay.nn, "dense") and hasattr(relay.nn, "relu")):
        pytest.skip("nn ops are not registered yet")
    x = relay.var("x", shape=(2, 2), dtype="float32")
    w = relay.var("w", shape=(2, 2), dtype="float32")
    h = relay.var("h")
    call = relay.nn.relu(relay.nn.dense(x, w))
    mod = module(relay.Function([x, w], relay.Let(h, call, h * relay.const(2.0))))
    assert str(mod) == (
        '#[version = "0.0.5"]\n'
        "def @main(%x: Tensor[(2, 2), float32], %w: Tensor[(2, 2), float32]) {\n"
        "  %0 = nn.dense(%x, %w);\n"
        "  let %h = nn.relu(%0);\n"
        "  multiply(%h, 2f)\n"
        "}"
    )
    round_trip(mod)


def test_types_print_as_in_relay():
    a = TypeVar("A")
    cases = {
        TensorType((2, 3), "float32"): "Tensor[(2, 3), float32]",
        TensorType((), "int64"): "int64",
        TensorType((3,), "bool"): "Tensor[(3), bool]",
        TensorType((Any(), SymbolicDim("n")), "float16"): "Tensor[(?, n), float16]",
        TupleType([]): "()",
        TupleType([TensorType((), "int32")]): "(int32,)",
        FuncType([a], a, [a]): "fn[A](A) -> A",
        FuncType([TensorType((), "int32")], TupleType([])): "fn (int32) -> ()",
        RefType(TensorType((), "float32")): "Ref[float32]",
        TypeCall(GlobalTypeVar("List"), [a]): "List[A]",
        TypeCall(GlobalTypeVar("nat"), []): "nat",
    }
    for ty, text in cases.items():
        assert relay.astext(ty) == text


def test_scalar_constants_inline():
    cases = [
        (relay.const(2.0), "2f"), (relay.const(-0.5), "-0.5f"), (relay.const(1e-5), "1e-05f"),
        (relay.const(2.0, "float64"), "2f64"), (relay.const(2.0, "float16"), "2f16"),
        (relay.const(2), "2"), (relay.const(2, "int64"), "2i64"), (relay.const(2, "int8"), "2i8"),
        (relay.const(2, "uint8"), "2u8"), (relay.const(True), "True"),
    ]
    for c, text in cases:
        assert relay.astext(c) == text
        assert_structural_equal(relay.parse_expr(text), c)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_float_text_is_bit_exact(dtype):
    bits = np.random.default_rng(0).integers(0, 2**16, size=(1500, 4), dtype="uint16")
    values = bits.view(dtype).ravel()
    values = values[np.isfinite(values)]
    parsed = round_trip(relay.Tuple([relay.const(v, dtype) for v in values]))
    got = np.array([f.data for f in parsed.fields], dtype=dtype)
    assert got.tobytes() == values.tobytes()


def test_constants_of_every_kind():
    values = [relay.const(v, d) for v, d in [
        (1.5, "float32"), (0.1, "float64"), (65504, "float16"), (-128, "int8"), (-7, "int16"),
        (2**31 - 1, "int32"), (-(2**63), "int64"), (255, "uint8"), (65535, "uint16"),
        (2**32 - 1, "uint32"), (2**64 - 1, "uint64"), (False, "bool"), (-0.0, "float32"),
        (float("nan"), "float32"), (float("-inf"), "float64"), (float("inf"), "float16"),
    ]]
    values += [
        relay.const(np.arange(6, dtype="int64").reshape(2, 3)),
        relay.const(np.array([1.5, np.nan, -np.inf], "float16")),
        relay.const(np.zeros((0, 2), "float32")),
        relay.const(np.array([[True], [False]])),
        relay.const(np.random.default_rng(1).standard_normal((2, 3, 4))),
    ]
    mod = module(relay.Function([], relay.Tuple(values)))
    text = mod.astext()
    assert "#[metadata]" in text and "meta[relay.Constant][0]" in text
    parsed = round_trip(mod)
    got = parsed["main"].body.fields[-1].data
    assert got.dtype == np.float64 and got.tobytes() == values[-1].data.tobytes()
    assert np.signbit(parsed["main"].body.fields[12].data)
    hidden = mod.astext(show_meta_data=False)
    assert "#[metadata]" not in hidden and "metadata omitted" in hidden


def test_shared_constant_stays_shared():
    c = relay.const(np.ones((2, 2), "float32"))
    x = relay.var("x", shape=(2, 2))
    parsed = round_trip(module(relay.Function([x], relay.add(relay.add(x, c), c))))
    body = parsed["main"].body
    assert body.args[1] is body.args[0].args[1]


# ---------------------------------------------------------------- expressions


def test_dataflow_sharing_is_preserved():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    s = relay.add(x, y)
    parsed = round_trip(module(relay.Function([x, y], relay.multiply(s, relay.negative(s)))))
    body = parsed["main"].body
    assert body.args[0] is body.args[1].args[0]
    e = relay.parse_expr("%0 = add(%x, %y);\nmultiply(%0, %0)")
    assert e.args[0] is e.args[1] and e.args[0].args[0].name_hint == "x"


def test_tuples_projections_and_refs():
    x = relay.var("x", shape=(3,))
    r = relay.var("r")
    t = relay.Tuple([x, relay.Tuple([x]), relay.Tuple([])])
    body = relay.Let(r, RefCreate(t[0]), relay.Tuple([
        RefWrite(r, relay.negative(RefRead(r))), RefRead(r), t[1][0], t[2],
    ]))
    round_trip(module(relay.Function([x], body)))


def test_let_forms():
    x = relay.var("x", shape=(2,))
    a, b, v = relay.var("a", shape=(2,)), relay.var("b"), relay.var("v")
    shared = relay.negative(x)
    chain = relay.Let(a, shared, relay.Let(b, relay.add(a, shared), relay.Tuple([a, b])))
    round_trip(module(relay.Function([x], chain)))
    # a let used as an argument is a block of its own; one used twice is bound once
    inner = relay.Let(v, relay.negative(x), relay.add(v, v))
    parsed = round_trip(module(relay.Function([x], relay.Tuple([inner, inner, inner[0]]))))
    fields = parsed["main"].body.fields
    assert fields[0] is fields[1] and isinstance(fields[0], relay.Let)
    # the value of a let that is also used elsewhere is bound first
    round_trip(module(relay.Function([x], relay.Let(v, shared, relay.Tuple([v, shared])))))


def test_if_and_sharing_across_branches():
    x = relay.var("x", shape=(2,))
    c = relay.var("c", dtype="bool")
    s = relay.add(x, x)
    z = relay.var("z")
    g = relay.Function([z], relay.multiply(z, s))  # shared by both branches
    e = relay.If(c, call(g, s), relay.If(c, call(g, relay.negative(s)), s))
    parsed = round_trip(module(relay.Function([x, c], e)))
    body = parsed["main"].body
    assert body.true_branch.op is body.false_branch.true_branch.op


def test_closures_and_higher_order():
    x = relay.var("x", shape=(2,))
    y, z, f = relay.var("y"), relay.var("z"), relay.var("f")
    s = relay.negative(x)
    add_s = relay.Function([y], relay.add(y, s))  # captures s, which is also used outside
    apply = relay.Function([f, z], call(f, call(f, z)))
    body = relay.Tuple([call(apply, add_s, s), call(add_s, x), s])
    round_trip(module(relay.Function([x], body)))


def test_recursive_let_bound_function():
    f, n = relay.var("f"), relay.var("n", dtype="int32")
    one = relay.const(1)
    body = relay.If(relay.equal(n, relay.const(0)), one,
                    relay.multiply(n, call(f, relay.subtract(n, one))))
    fact = relay.Function([n], body, TensorType((), "int32"))
    round_trip(module(relay.Function([], relay.Let(f, fact, call(f, relay.const(5))))))
    # a node that calls f, used inside f and after the let, is bound inside f
    k = call(f, relay.const(2))
    m = relay.var("m", dtype="int32")
    fn = relay.Function([m], relay.add(m, k))
    round_trip(module(relay.Function([], relay.Let(f, fn, relay.Tuple([k, call(f, one)])))))


def test_mutually_recursive_globals_and_forward_references():
    even, odd = relay.GlobalVar("even"), relay.GlobalVar("odd")
    mod = relay.IRModule()
    for me, other, base in [(even, odd, True), (odd, even, False)]:
        n = relay.var("n", dtype="int32")
        mod[me] = relay.Function([n], relay.If(
            relay.equal(n, relay.const(0)), relay.const(base),
            other(relay.subtract(n, relay.const(1)))))
    parsed = round_trip(mod)
    assert parsed["even"].body.false_branch.op == parsed.get_global_var("odd")


def test_polymorphic_functions_and_attrs():
    a, b = TypeVar("A"), TypeVar("B")
    f = relay.var("f", FuncType([a], b))
    x = relay.var("x", a)
    mod = relay.IRModule()
    mod["apply"] = relay.Function([f, x], call(f, x), b, [a, b])
    c = TypeVar("A")  # a different A, inside: printed under a fresh name
    y = relay.var("y", c)
    ident = relay.Function([y], y, c, [c])
    d = TypeVar("A")
    xd = relay.var("x", d)
    mod["nested"] = relay.Function([xd], relay.Tuple([call(ident, xd), ident]), None, [d])
    z = relay.var("z", shape=(Any(), SymbolicDim("n"), 3))
    mod["prim"] = relay.Function([z], relay.negative(z), attrs={
        "Primitive": 1, "Compiler": "c\"q\"", "ratio": 0.25, "Inline": True})
    text = round_trip(mod).astext()
    assert 'Primitive=1, Compiler="c\\"q\\"", ratio=0.25, Inline=True' in text
    assert "fn[A1](%y: A1) -> A1" in text
    assert "Tensor[(?, n, 3), float32]" in text


def test_op_attrs(toy_op):
    x = relay.var("x", shape=(2,))
    calls = [
        Call(toy_op, (x,), _ToyAttrs()),
        Call(toy_op, (x,), _ToyAttrs(units=3, rate=1e-05, layout="NHWC", flag=True,
                                     pads=(1, 2), nested=((0, 1), (), ("a",)))),
        Call(toy_op, (x,), _ToyAttrs(rate=float("-inf"))),
    ]
    text = round_trip(module(relay.Function([x], relay.Tuple(calls)))).astext()
    assert "text_test.toy(%x)" in text
    assert ('text_test.toy(%x, units=3, rate=1e-05, layout="NHWC", flag=True, pads=[1, 2], '
            'nested=[[0, 1], [], ["a"]])') in text


def test_adts_and_every_pattern(list_mod):
    mod, header, cons, nil = list_mod
    opt = GlobalTypeVar("Option")
    b = TypeVar("B")
    some, none = Constructor("Some", [b], opt), Constructor("None", [], opt)
    mod.add_type(TypeData(opt, [b], [some, none]))
    a = TypeVar("A")
    f, xs = relay.var("f", FuncType([a], a)), relay.var("xs", TypeCall(header, [a]))
    h, t = relay.var("h"), relay.var("t")
    map_gv = relay.GlobalVar("map")
    mod[map_gv] = relay.Function([f, xs], Match(xs, [
        Clause(PatternConstructor(cons, [PatternVar(h), PatternVar(t)]),
               cons(call(f, h), map_gv(f, t))),
        Clause(PatternConstructor(nil), nil()),
    ]), TypeCall(header, [a]), [a])
    i32 = TensorType((), "int32")
    p = relay.var("p", TupleType([TypeCall(opt, [i32]), TypeCall(header, [i32])]))
    v, w = relay.var("v"), relay.var("w", i32)
    mod["get"] = relay.Function([p], Match(p, [
        Clause(PatternTuple([PatternConstructor(some, [PatternVar(v)]),
                             PatternConstructor(cons, [PatternVar(w), PatternWildcard()])]),
               relay.add(v, w)),
        Clause(PatternTuple([PatternConstructor(none), PatternWildcard()]), relay.const(0)),
        Clause(PatternWildcard(), relay.const(-1)),
    ], complete=False))
    mod["values"] = relay.Function([], relay.Tuple([cons, nil(), Call(none, ()), map_gv]))
    text = round_trip(mod).astext()
    assert "type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}" in text
    assert "match? (%p) {" in text and "(Some(%v), Cons(%w: int32, _)) => add(%v, %w)," in text
    assert relay.astext(PatternTuple([PatternWildcard()])) == "(_,)"


def test_init_module_types_and_functions_are_visible(list_mod):
    mod, header, cons, nil = list_mod
    x = relay.var("x", shape=(2,))
    mod["wrap"] = relay.Function([x], cons(x, nil()))
    parsed = relay.parse(
        "def @main(%y: Tensor[(2), float32]) -> List[Tensor[(2), float32]] {\n"
        "  @wrap(%y)\n}", init_module=mod)
    assert "wrap" in parsed and "main" in parsed and parsed.has_constructor("Cons")
    assert parsed["main"].ret_type.func == header
    round_trip(parsed)


def test_free_variables_in_expressions():
    x, y = relay.var("x", shape=(2,)), relay.var("y")
    e = relay.add(relay.negative(x), y)
    assert relay.astext(e).startswith("free_var %x: Tensor[(2), float32];\nfree_var %y;\n")
    parsed = round_trip(e, map_free_vars=True)
    assert parsed.args[0].args[0].type_annotation == TensorType((2,), "float32")


def test_variable_names_are_made_unique_and_lexable():
    a1, a2, odd, num = relay.var("a"), relay.var("a"), relay.var("my.var-1"), relay.var("7")
    e = relay.Function([a1, a2, odd, num], relay.Tuple([a1, a2, odd, num]))
    assert relay.astext(e).startswith('fn (%a, %a1, %"my.var-1", %"7") {')
    parsed = round_trip(module(e))
    # framework parameter names (``layer1.0.conv1.weight``) survive the round trip exactly
    assert [p.name_hint for p in parsed["main"].params] == ["a", "a1", "my.var-1", "7"]


def test_other_nodes_print():
    x = relay.var("x")
    clause = Clause(PatternVar(x), relay.negative(x))
    assert relay.astext(clause) == "%x => {\n  negative(%x)\n}"
    assert str(relay.var("x", shape=(2,))) == "%x"  # a lone variable, as in messages
    assert relay.astext(relay.GlobalVar("f")) == "@f"
    assert relay.astext(relay.get_op("add")) == "add"


# ---------------------------------------------------------------- hand-written text


HAND_WRITTEN = '''#[version = "0.0.5"]
// comments of both kinds are ignored
type Tree[A] { Leaf, Node(Tree[A], A, Tree[A]) }

def @main(%x: Tensor[(), float32], %y: Tensor[(3,), float32], %t: Tree[int32]) {
  let %z = add(multiply(%x, %y), (%y)); /* nested calls and parentheses */
  let %f = fn [A](%a: A) -> A { %a };
  let %g: fn (int32) -> int32 = fn (%b) { %b };
  %0 = (%z, %z,).1;
  %1 = if (equal(%x, 1f)) { %0 } else if (equal(%x, 2f)) { negative(%0) } else { %0 };
  let %n = match? (%t) { Node(_, %v, _) => %v, Leaf => { %g(0) } };
  %2 = { let %x = %1; %x };  // a block as a value; this %x shadows the parameter
  (subtract(%2, %f(%1)), %n, %x)
}
'''


def test_hand_written_text():
    mod = relay.parse(HAND_WRITTEN, "hand.relay")
    round_trip(mod)
    body = mod["main"].body
    assert isinstance(body, relay.Let) and body.var.name_hint == "z"
    x_param = mod["main"].params[0]
    tail = body.body.body.body.body
    assert tail.fields[2] is x_param  # the block's %x went out of scope
    assert mod["main"].params[1].type_annotation == TensorType((3,), "float32")
    assert str(body.span) == "hand.relay:6:3"
    assert str(body.value.span) == "hand.relay:6:12"


def test_parse_expr_accepts_a_bare_block():
    e = relay.parse_expr("let %a = 1f; %0 = add(%a, %a); (%0, %0)")
    assert isinstance(e, relay.Let) and e.body.fields[0] is e.body.fields[1]


# ---------------------------------------------------------------- errors


ERRORS = [
    ("def @main(%x) {\n  nn.dens(%x)\n}", "2:3", "unknown operator 'nn.dens'; did you mean nn."),
    ("def @main(%x) {\n  ad(%x, %x)\n}", "2:3", "did you mean add?"),
    ("def @main(%x) {\n  add(%x, %y)\n}", "2:11", "unbound variable %y"),
    ("def @main(%x) {\n  add(%x, %3)\n}", "2:11", "%3 is not bound here"),
    ("def @main(%x) {\n  add(%x, %x\n}", "3:1", "expected ',' or ')' in the arguments, found '}'"),
    ("def @f(%x) {\n  %0 = add(%x, %x)\n  %0\n}", "3:3", "expected ';' after the value of %0"),
    ("def @f(%x) {\n  add(%x)\n}", "2:3", "add takes 2 inputs (lhs, rhs), found 1"),
    ("def @f(%x: Lst[float32]) {\n  %x\n}", "1:12", "unknown type Lst"),
    ("def @f(%x) { @g(%x) }\ndef @h() { 1 }", "1:14", "unknown global function @g"),
    ("def @f() { 1 }\ndef @f() { 2 }", "2:5", "@f is defined twice"),
    ("def @f(%x) {\n  %y = negative(%x);\n  %y\n}", "2:3", "expected 'let' before %y"),
    ('#[version = "0.0.4"]\n', "1:1", 'unsupported text format version "0.0.4"'),
    ("def @f() { meta[relay.Constant][0] }", "1:12", "needs the '#[metadata]' section"),
    ("def @f(%x: Tensor[(2), float31]) { %x }", "1:24", "expected a dtype"),
    ("def @f() { 1q }", "1:12", "unknown number suffix 'q'"),
    ("def @f() { 300i8 }", "1:12", "300i8 does not fit in int8"),
    ('def @f() {\n  "abc\n}', "2:3", "unterminated string"),
    ("def @f() {\n  1 $ 2\n}", "2:5", "unexpected character '$'"),
    ("def @f() { 1 } /* open", "1:16", "unterminated comment"),
    ("fn (%x) { %x }", "1:1", "expected 'def' or 'type', found 'fn'"),
    ("def @f(%c) { if (%c) { 1 } }", "1:28", "expected 'else', found '}'"),
    ("def @f(%c) { match (%c) { Foo => 1 } }", "1:27", "unknown constructor Foo"),
    ("def @f(%c) { add(%c, ", "1:22", "expected an expression, found end of input"),
    ("def @f(%x) { %x(%x, a=1) }", "1:14", "only operators take attributes"),
    ("def @f() { negative(1f, units=2) }", "1:12", "negative takes no attributes"),
    ("def @f() { negative(1f, 2f) }", "1:12", "negative takes 1 inputs (data), found 2"),
]


@pytest.mark.parametrize("text, where, message", ERRORS)
def test_parse_errors(text, where, message):
    with pytest.raises(ParseError) as info:
        relay.parse(text, "bad.relay")
    assert str(info.value).startswith(f"bad.relay:{where}: "), str(info.value)
    assert message in str(info.value)


def test_error_for_bad_attributes(toy_op):
    with pytest.raises(ParseError, match=r"1:14: .*unknown attribute colour"):
        relay.parse("def @f(%x) { text_test.toy(%x, colour=1) }")


def test_parse_expr_errors():
    with pytest.raises(ParseError, match="1:9: unknown type Foo"):
        relay.parse_expr("fn (%x: Foo) { %x }")
    with pytest.raises(ParseError, match="expected end of input, found '}'"):
        relay.parse_expr("%x }")


# ---------------------------------------------------------------- random programs


def _random_program(seed: int):
    """A random well-scoped graph: sharing across branches, closures and recursive lets."""
    rng = random.Random(seed)
    ty = TensorType((), "float32")

    def block(pool, fns, depth, size):
        """Nodes built here may use ``pool`` and call ``fns``; neither escapes the block."""
        local, fns = list(pool), list(fns)
        for _ in range(size):
            r = rng.random()
            pick = rng.choice
            if r < 0.3:
                local.append(relay.add(pick(local), pick(local)))
            elif r < 0.4:
                local.append(relay.negative(pick(local)))
            elif r < 0.5 and depth < 3:
                c = relay.less(pick(local), pick(local))
                yes, no = block(local, fns, depth + 1, 3), block(local, fns, depth + 1, 3)
                local.append(relay.If(c, yes, no))
            elif r < 0.6 and depth < 3:
                p = relay.var("p", ty)
                fn = relay.Function([p], block([*local, p], fns, depth + 1, 3))
                fns.append(fn)
                local.append(call(fn, pick(local)))
            elif r < 0.7 and fns:
                local.append(call(pick(fns), pick(local)))  # a function shared across blocks
            elif r < 0.8 and depth < 3:
                v = relay.var("v")
                local.append(relay.Let(v, pick(local), block([*local, v], fns, depth + 1, 2)))
            elif r < 0.9:
                t = relay.Tuple([pick(local), pick(local)])
                local.append(relay.TupleGetItem(t, rng.randrange(2)))
            else:  # a recursive function, and a call of it used inside and after it
                f, n = relay.var("f"), relay.var("n", ty)
                k = call(f, pick(local))
                fn = relay.Function([n], relay.add(n, k))
                local.append(relay.Let(f, fn, relay.add(k, call(f, pick(local)))))
        fresh = local[len(pool):]
        return rng.choice(fresh) if fresh else rng.choice(local)

    x, y = relay.var("x", ty), relay.var("y", ty)
    return module(relay.Function([x, y], block([x, y, relay.const(1.0)], [], 0, 12)))


@pytest.mark.parametrize("seed", range(40))
def test_random_programs_round_trip(seed):
    mod = _random_program(seed)
    assert relay.well_formed(mod["main"])
    round_trip(mod)


# ---------------------------------------------------------------- scale


N = 100_000


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def test_long_call_chain():
    x = relay.var("x", shape=(2, 2))
    negative, e = relay.get_op("negative"), x
    for _ in range(N):
        e = Call(negative, (e,))
    mod = module(relay.Function([x], e))
    text, t_print = _timed(mod.astext)
    parsed, t_parse = _timed(lambda: relay.parse(text))
    assert t_print < 10 and t_parse < 10, (t_print, t_parse)
    assert text.count("negative(") == N
    assert_structural_equal(parsed, mod)


def test_long_let_chain():
    x = relay.var("x", shape=(2, 2))
    add, one = relay.get_op("add"), relay.const(1.0)
    lets, v = [], x
    for _ in range(N):
        nv = relay.var("v")
        lets.append((nv, Call(add, (v, one))))
        v = nv
    body = v
    for var, value in reversed(lets):
        body = relay.Let(var, value, body)
    mod = module(relay.Function([x], body))
    text, t_print = _timed(mod.astext)
    parsed, t_parse = _timed(lambda: relay.parse(text))
    assert t_print < 10 and t_parse < 10, (t_print, t_parse)
    assert text.count("let %v") == N
    # the shape of the parsed chain, checked in a loop (cheaper than structural_equal)
    e, prev, seen = parsed["main"].body, parsed["main"].params[0], set()
    while isinstance(e, relay.Let):
        assert e.value.op is add and e.value.args[0] is prev and e.var not in seen
        assert float(e.value.args[1].data) == 1.0
        prev = e.var
        seen.add(prev)
        e = e.body
    assert e is prev and len(seen) == N


@pytest.mark.parametrize("template", [
    "fn (%x) {{ {tok} }}",                      # an unknown operator name
    "fn (%x) {{ 1{tok} }}",                     # a number with a huge suffix
    'def @main(%x) {{ %{tok} }}',               # an unbound variable
    'def @main(%x) {{ @{tok}(%x) }}',           # an unknown global
])
def test_a_parse_error_never_quotes_a_huge_token_whole(template):
    token = "x" * (10 * 1024 * 1024)
    text = template.format(tok=token)
    with pytest.raises(relay.ParseError) as info:
        relay.parse(text) if text.startswith("def") else relay.ir.parser.parse_expr(text)
    message = str(info.value)
    assert len(message) < 600, message[:300]
    assert "characters]" in message  # says how much was left out
