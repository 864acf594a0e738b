"""Relay's legalisation hooks over relayir's IR: ``register_legalize`` /
``register_qnn_legalize`` / ``TempOpAttr(op, "FTVMLegalize", fn)`` put a Python function
in ``HOOKS``, and ``relay.transform.Legalize`` / ``relay.qnn.transform.Legalize`` call
it on every call of that op, once, bottom-up, as Relay's ``Legalize`` does.

relayir itself has no legalisations (its lowering picks what a target takes), so with
no hook the passes change nothing. A hook gets Relay's arguments: the call's attributes
as a mapping (``attrs["padding"]``, ``attrs.padding``, ``**attrs``), its arguments and
the types of the arguments followed by the call's type; it returns a replacement of
the same type, or ``None`` to keep the call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ...ir.expr import Call, Op
from ...ir.module import IRModule
from ...transform.analysis import TypedMutator, typed_module
from ...transform.pass_infra import ModulePass, PassInfo
from ...transform.rewrite import infer_new
from ..error import NotInRelayirError

HOOKS: dict[str, dict[str, Callable]] = {"FTVMLegalize": {}, "FTVMQnnLegalize": {}}


def hook_table(key: str, api: str) -> dict[str, Callable]:
    """The hooks of the op attribute ``key`` (refused, naming ``api``, when relayir runs no
    hooks of that kind)."""
    if key not in HOOKS:
        raise NotInRelayirError(
            f"{api} is not part of relayir for the op attribute {key!r}: relayir's ops are "
            f"defined once in relayir.op; the layer runs Python hooks only for "
            f"{', '.join(sorted(HOOKS))} (relay.transform.Legalize, relay.qnn.transform."
            f"Legalize)")
    return HOOKS[key]


class AttrsView(Mapping):
    """An op's attributes as Relay's hooks read them: by key, by attribute, or ``**``."""

    def __init__(self, attrs):
        self._attrs = attrs
        self._items = dict(attrs.items()) if attrs is not None else {}

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __getattr__(self, name):
        try:
            return self._items[name]
        except KeyError:
            raise AttributeError(name) from None


class _Legalizer(TypedMutator):
    def __init__(self, hooks: dict[str, Callable]):
        super().__init__()
        self.hooks = hooks

    def visit_call(self, call):
        new = super().visit_call(call)
        hook = self.hooks.get(new.op.name) if type(new.op) is Op else None
        if hook is None:
            return new
        types = [a.checked_type for a in new.args] + [call.checked_type]
        out = hook(AttrsView(new.attrs), list(new.args), types)
        if out is None:
            return new
        out = out.astuple() if hasattr(out, "astuple") else out
        return infer_new(out) if isinstance(out, Call) or not out.has_type else out


def legalize_pass(key: str) -> ModulePass:
    """Apply the hooks of ``key`` (read when the pass runs, so a ``TempOpAttr`` applies)."""

    def run(mod: IRModule, ctx) -> IRModule:
        hooks = HOOKS[key]
        if not hooks:
            return mod
        mod = typed_module(mod)
        return mod.with_functions({gv: fn if fn.is_primitive else _Legalizer(hooks).visit(fn)
                                   for gv, fn in mod.functions.items()})

    return ModulePass(run, PassInfo("Legalize", 0))


def register(key: str, api: str, op_name: str, fn: Callable | None = None, level: int = 10):
    """Relay's ``register_legalize(op_name, fn)``; without ``fn`` a decorator."""
    table = hook_table(key, api)

    def put(f: Callable) -> Callable:
        table[op_name] = f
        return f

    return put if fn is None else put(fn)
