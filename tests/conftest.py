import pytest

import relayir as relay
from relayir.ir.adt import Constructor, TypeData
from relayir.ir.types import GlobalTypeVar, TypeCall, TypeVar


@pytest.fixture
def list_mod():
    """A module with a hand-built ``List[A] = Cons(A, List[A]) | Nil`` (no parser needed)."""
    header = GlobalTypeVar("List")
    a = TypeVar("A")
    cons = Constructor("Cons", [a, TypeCall(header, [a])], header)
    nil = Constructor("Nil", [], header)
    mod = relay.IRModule()
    mod.add_type(TypeData(header, [a], [cons, nil]))
    return mod, header, cons, nil


@pytest.fixture
def round_trip_byte_limit():
    """The most constant data a module may hold for the round trip below to check it
    (a folder's conftest lowers it where its tests bind big weights)."""
    return 1 << 20


@pytest.fixture(autouse=True)
def _round_trip_every_typed_module(monkeypatch, round_trip_byte_limit):
    """Every module the tests type-check must survive print → parse unchanged."""
    from relayir.ir.structural import assert_structural_equal
    from relayir.typing.infer import TypeInferencer

    original = TypeInferencer.infer_module

    def checked(self):
        mod = self.mod
        if mod.functions and _small(mod, byte_limit=round_trip_byte_limit):
            text = mod.astext()
            assert_structural_equal(relay.parse(text), mod)
        return original(self)

    monkeypatch.setattr(TypeInferencer, "infer_module", checked)


def _small(mod, limit=5000, byte_limit=1 << 20):
    """Round-trip only modules that print quickly: few nodes and little constant data."""
    from relayir.ir.expr import Constant
    from relayir.ir.functor import post_order

    n = nbytes = 0
    for fn in mod.functions.values():
        nodes = post_order(fn)
        n += len(nodes)
        nbytes += sum(c.data.nbytes for c in nodes if type(c) is Constant)
        if n > limit or nbytes > byte_limit:
            return False
    return True
