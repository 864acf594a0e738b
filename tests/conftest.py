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
