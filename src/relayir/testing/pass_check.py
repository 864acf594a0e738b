"""Helpers for testing passes: text in, expected text out, types and meaning kept.

Pass tests read as "input text → expected text" (``check_pass``, or ``check_main`` for
one function written as parameters and body), and every result is held to what the
passes promise:

- ``run_pass`` runs a pass and checks that it returned a new module, that every node
  of the result carries a type and that it is the one inference from scratch gives
  (``assert_types_are_inferred_ones``), and that the pass gives the same result again
  with the verifier on after it (``VerifyAfterEachPass``);
- ``evaluate`` / ``results`` / ``assert_same_results`` compare what two modules compute,
  for the random-program checks (``random_program`` builds the programs, ``wrap_calls``
  plants work for a pass in them, ``random_inputs`` makes inputs for any ``@main``);
- ``typed_chain`` builds the 100,000-node programs, typed as built, that show a pass
  neither recurses nor re-infers per node.

``parse`` adds the version line, a ``#[metadata]`` section for the constants a test
names, and short aliases for long types. The helpers are written for this package's
tests and for anyone writing a pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..executor import create_executor
from ..ir.analysis import check_well_formed
from ..ir.expr import Call, Expr, Function, GlobalVar, Let, Op, Var, short_text
from ..ir.functor import ExprMutator, post_order
from ..ir.module import IRModule
from ..ir.op import call
from ..ir.parser import parse as _parse
from ..ir.printer import VERSION, metadata_text
from ..ir.structural import assert_structural_equal, structural_equal
from ..ir.types import FuncType, TensorType
from ..transform.instrument import VerifyAfterEachPass
from ..transform.pass_infra import Pass, PassContext
from ..typing.infer import infer_expr, infer_module

HEADER = f'#[version = "{VERSION}"]\n'

# ---------------------------------------------------------------- programs from text


def parse(text: str, *constants, mod: IRModule | None = None,
          aliases: Mapping[str, str] | None = None) -> IRModule:
    """``text`` (no version line needed) as a module, added to ``mod`` when given.

    ``constants[i]`` is what ``meta[relay.Constant][i]`` names in the text; ``aliases``
    are replaced before parsing (``{"T2": "Tensor[(2), float32]"}`` keeps programs short).
    """
    for short, full in (aliases or {}).items():
        text = text.replace(short, full)
    if constants:
        text += metadata_text([np.asarray(c) for c in constants])
    return _parse(HEADER + text, init_module=mod)


def parse_main(params: str, body: str, *constants) -> IRModule:
    """``def @main(params) { body }``: one function written as its parameters and body."""
    return parse(f"def @main({params}) {{\n{body}\n}}", *constants)


def plain_text(mod: IRModule) -> str:
    """The module's text without types: equal texts mean equal sharing, which structural
    equality does not see."""
    return mod.astext(show_types=False)


# ---------------------------------------------------------------- running a pass


def assert_types_are_inferred_ones(mod: IRModule) -> None:
    """Every global is well formed, and every node carries the type inference gives it.

    A pass that types its new nodes itself (rather than re-inferring the module) must
    agree with inference from scratch, which runs here on a copy of the module.
    """
    for fn in mod.functions.values():
        check_well_formed(fn)
    nodes = [n for fn in mod.functions.values() for n in post_order(fn) if type(n) is not Op]
    untyped = [n for n in nodes if not n.has_type]
    assert not untyped, f"untyped {type(untyped[0]).__name__}: {short_text(untyped[0])}"
    own = [n.checked_type for n in nodes]
    infer_module(mod.copy())  # overwrites the checked types of the same nodes
    for n, ty in zip(nodes, own):
        assert structural_equal(ty, n.checked_type), \
            f"{ty} kept, {n.checked_type} inferred for {short_text(n)}"


def run_pass(p: Pass, mod: IRModule, opt_level: int = 2) -> IRModule:
    """``p(mod)``, checked: a new module, typed as inference would type it, and the same
    result when the pass runs again under ``VerifyAfterEachPass``."""
    out = p(mod)
    assert out is not mod
    assert_types_are_inferred_ones(out)
    with PassContext(opt_level=opt_level, instruments=[VerifyAfterEachPass()]):
        assert_structural_equal(p(mod), out)
    return out


def check_pass(p: Pass, before: str, after: str, mod: IRModule | None = None, *,
               opt_level: int = 2, aliases: Mapping[str, str] | None = None,
               same_text: bool = False) -> IRModule:
    """``run_pass`` on the text ``before`` must give the text ``after`` (parsed into
    ``mod`` when given); ``same_text`` also compares the printed texts, and with them
    which nodes are shared. Returns the pass's result."""
    out = run_pass(p, parse(before, mod=mod, aliases=aliases), opt_level)
    expected = parse(after, mod=mod, aliases=aliases)
    assert_structural_equal(out, expected)
    if same_text:
        assert plain_text(out) == plain_text(expected)
    return out


def check_main(p: Pass, params: str, before: str, after: str, *constants) -> IRModule:
    """One function written as ``params`` and two bodies (``parse_main``): ``p`` turns
    ``before`` into ``after`` and leaves every node typed as inference would type it.
    Lighter than ``check_pass``: the pass runs once, under the current ``PassContext``."""
    out = p(parse_main(params, before, *constants))
    assert_structural_equal(out, parse_main(params, after, *constants))
    assert_types_are_inferred_ones(out)
    return out


# ---------------------------------------------------------------- meaning


def evaluate(mod: IRModule, inputs):
    """``@main`` on ``inputs`` (a list, or a dict by parameter name) in the interpreter."""
    f = create_executor("debug", mod).evaluate()
    return f(**inputs) if isinstance(inputs, Mapping) else f(*inputs)


def results(mod: IRModule, inputs) -> list[np.ndarray]:
    """What ``@main`` computes, as a flat list of arrays (nested tuples flattened)."""
    return _flat(evaluate(mod, inputs))


def _flat(v) -> list[np.ndarray]:
    if isinstance(v, tuple):
        return [x for e in v for x in _flat(e)]
    return [np.asarray(v)]


def assert_same_results(a, b, rtol: float = 1e-5, atol: float = 1e-6,
                        exact: bool = False) -> None:
    """``a`` and ``b`` (values or ``results`` lists) have the same structure and values:
    equal to the bit with ``exact``, else within ``rtol`` and ``atol``."""
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), (len(a), b)
        for x, y in zip(a, b):
            assert_same_results(x, y, rtol, atol, exact)
    elif exact:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def random_inputs(mod: IRModule, seed: int = 1) -> list[np.ndarray]:
    """Standard-normal float32 values for ``@main``'s (statically shaped) parameters."""
    rng = np.random.default_rng(seed)
    return [rng.normal(size=[int(d) for d in p.type_annotation.shape]).astype("float32")
            for p in mod["main"].params]


def wrap_calls(mod: IRModule, wrap: Callable[[Call, object], Expr]) -> IRModule:
    """``@main`` (typed here) with every call ``c`` replaced by ``wrap(c2, c.checked_type)``,
    where ``c2`` is ``c`` over its wrapped arguments: how a random-program test plants
    work for a pass (identities to simplify, bias adds to canonicalise, ...)."""
    fn = mod["main"]
    infer_expr(fn)

    class Wrap(ExprMutator):
        def visit_call(self, call):
            return wrap(super().visit_call(call), call.checked_type)

    return IRModule.from_expr(Function(fn.params, Wrap().visit(fn.body)))


# ---------------------------------------------------------------- scale


CHAIN_TYPE = TensorType((2,), "float32")


def _default_step(e: Expr, i: int) -> Expr:
    return call("add", (e, e)) if i % 2 else call("negative", (e,))


def typed_chain_function(kind: str, n: int = 100_000,
                         step: Callable[[Expr, int], Expr] = _default_step,
                         dead: bool = False, attrs: dict | None = None) -> Function:
    """``fn (%x: Tensor[(2), float32])`` over ``n`` steps, every node typed as built.

    ``kind`` ``"ops"`` nests the steps in one dataflow chain, ``"lets"`` binds each to a
    variable of a ``let`` chain. ``step(e, i)`` builds step ``i`` over ``e`` (by default
    ``negative`` and ``add(e, e)`` in turn) and types any inner node it makes; the step
    itself is typed here as ``CHAIN_TYPE``. ``dead``: the ``let`` chain's result is
    ``%x``, so every binding is dead.
    """
    ty = CHAIN_TYPE
    x = Var("x", ty)
    x.set_checked_type(ty)
    e, lets = x, []
    for i in range(n):
        e = step(e, i)
        e.set_checked_type(ty)
        if kind == "lets":
            v = Var(f"v{i}")
            v.set_checked_type(ty)
            lets.append((v, e))
            e = v
    if dead:
        e = x
    for v, value in reversed(lets):
        e = Let(v, value, e)
        e.set_checked_type(ty)
    fn = Function([x], e, attrs=attrs)
    fn.set_checked_type(FuncType([ty], ty))
    return fn


def typed_chain(kind: str, n: int = 100_000, **kwargs) -> IRModule:
    """A module whose ``@main`` is ``typed_chain_function(kind, n, **kwargs)``."""
    return IRModule({GlobalVar("main"): typed_chain_function(kind, n, **kwargs)})


__all__ = [
    "CHAIN_TYPE", "HEADER", "assert_same_results", "assert_types_are_inferred_ones",
    "check_main", "check_pass", "evaluate", "parse", "parse_main", "plain_text", "random_inputs",
    "results", "run_pass", "typed_chain", "typed_chain_function", "wrap_calls",
]
