"""``relay.analysis._ffi_api._test_type_solver()``: Relay's handle on its type solver,
over relayir's (``relayir.typing.solver.TypeSolver``), and ``tvm.ir.EnvFunc`` naming the
two relations Relay's solver tests use.

``solver("Unify")(a, b)`` unifies and returns the resolved result; ``"Resolve"`` resolves
a type; ``"AddConstraint"`` takes a ``relay.ty.TypeRelation``: ``Broadcast`` is relayir's
broadcasting relation (``add``'s), run when its inputs are known; ``Identity`` unifies
its input with its output at once (so it solves backwards too); ``"Solve"`` runs the
pending relations and is True when all ran (an unsolvable one raises, naming it).
A unification that fails raises ``tvm.error.TVMError`` (relayir's ``TypeInferenceError``).
"""

from __future__ import annotations

from ...ir.op import get_op
from ...ir.types import GlobalTypeVar
from ...typing.solver import Relation, TypeSolver
from ..error import NotInRelayirError

_PREFIX = "tvm.relay.type_relation."


class EnvFunc:
    """``tvm.ir.EnvFunc.get(name)``: a named global function (relations only)."""

    def __init__(self, name: str):
        self.name = name

    @staticmethod
    def get(name: str) -> EnvFunc:
        if not name.startswith(_PREFIX) or name[len(_PREFIX):] not in _RELATIONS:
            raise NotInRelayirError(
                f"tvm.ir.EnvFunc.get({name!r}) is not part of relayir: only the relations "
                f"{', '.join(_PREFIX + r for r in _RELATIONS)} are offered")
        return EnvFunc(name)


def _broadcast(solver: TypeSolver, inputs, output) -> None:
    add = get_op("add")
    solver.add_relation(Relation(lambda types: add.type_rel(types, None), list(inputs), output,
                                 lambda: "in the Broadcast relation"))


def _identity(solver: TypeSolver, inputs, output) -> None:
    solver.unify(inputs[0], output, lambda: "in the Identity relation")


_RELATIONS = {"Broadcast": _broadcast, "Identity": _identity}


class _Solver:
    def __init__(self):
        self.solver = TypeSolver()

    def __call__(self, name: str):
        methods = {"Solve": self.solve, "Unify": self.unify, "Resolve": self.resolve,
                   "AddConstraint": self.add_constraint}
        if name not in methods:
            raise NotInRelayirError(f"the test type solver's {name!r} is not part of relayir; "
                                    f"it offers {', '.join(methods)}")
        return methods[name]

    def unify(self, a, b):
        if isinstance(a, GlobalTypeVar) and a == b:
            return a
        return self.solver.resolve(self.solver.unify(a, b, lambda: "in Unify"))

    def resolve(self, t):
        return self.solver.resolve(t)

    def solve(self) -> bool:
        self.solver.solve()
        return True

    def add_constraint(self, rel) -> None:
        name = rel.func.name[len(_PREFIX):]
        args = list(rel.args)
        _RELATIONS[name](self.solver, args[:rel.num_inputs], args[-1])


class _FFI:
    """``relay.analysis._ffi_api``: only the test solver."""

    @staticmethod
    def _test_type_solver() -> _Solver:
        return _Solver()

    def __getattr__(self, name: str):
        raise NotInRelayirError(f"tvm.relay.analysis._ffi_api.{name} is not part of relayir "
                                f"(it offers _test_type_solver only)")


ffi_api = _FFI()
