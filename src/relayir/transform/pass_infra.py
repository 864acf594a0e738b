"""Pass infrastructure, as in TVM Relay: ``Pass``, ``Sequential``, ``PassContext``.

A pass maps an ``IRModule`` to a new ``IRModule`` and declares its name, opt level and
the passes it requires. ``PassContext`` (a ``with`` scope) carries the opt level,
required and disabled passes, a config dict and instruments. Inside a ``Sequential``
a pass runs when it is required, or when its opt level is at most the context's and
it is not disabled; called directly, a pass always runs.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import Error
from ..ir.module import IRModule


@dataclass(frozen=True)
class PassInfo:
    name: str
    opt_level: int = 0
    required: tuple[str, ...] = ()


class PassContext:
    """``with PassContext(opt_level=3, disabled_pass=["FuseOps"]): ...``"""

    _stack: list[PassContext] = []

    def __init__(self, opt_level: int = 2, required_pass: Sequence[str] = (),
                 disabled_pass: Sequence[str] = (), config: dict | None = None,
                 instruments: Sequence = ()):
        if not 0 <= opt_level <= 3:
            raise Error(f"opt_level must be 0..3, found {opt_level}")
        self.opt_level = opt_level
        self.required_pass = frozenset(required_pass)
        self.disabled_pass = frozenset(disabled_pass)
        self.config = dict(config or {})
        self.instruments = list(instruments)

    @classmethod
    def current(cls) -> PassContext:
        return cls._stack[-1] if cls._stack else _DEFAULT

    def __enter__(self) -> PassContext:
        _enter_all(self.instruments)
        PassContext._stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        try:
            for inst in self.instruments:  # one that raises stops the rest, as in TVM
                _hook(inst, "exit_pass_ctx")()
        finally:
            PassContext._stack.pop()

    def override_instruments(self, instruments) -> None:
        """Replace the instruments: the old ones exit, the new ones enter (an error in
        either leaves the context without instruments)."""
        old, self.instruments = self.instruments, []
        for inst in old:
            _hook(inst, "exit_pass_ctx")()
        new = list(instruments or ())
        _enter_all(new)
        self.instruments = new

    def pass_enabled(self, info: PassInfo) -> bool:
        if info.name in self.disabled_pass:
            return False
        if info.name in self.required_pass:
            return True
        return info.opt_level <= self.opt_level


_DEFAULT = PassContext()


def _enter_all(instruments) -> None:
    """Each instrument's ``enter_pass_ctx`` in order; when one raises, the ones already
    entered exit (in order) and the error propagates."""
    entered = []
    try:
        for inst in instruments:
            _hook(inst, "enter_pass_ctx")()
            entered.append(inst)
    except BaseException:
        for inst in entered:
            _hook(inst, "exit_pass_ctx")()
        raise


def _hook(instrument, name: str) -> Callable:
    fn = getattr(instrument, name, None)
    return fn if fn is not None else (lambda *a, **k: True if name == "should_run" else None)


class Pass:
    """Base class: subclasses implement ``transform(mod, ctx) -> IRModule``."""

    info: PassInfo

    def __call__(self, mod: IRModule) -> IRModule:
        if not isinstance(mod, IRModule):
            raise Error(f"pass {self.info.name} takes an IRModule, found {type(mod).__name__}")
        ctx = PassContext.current()
        instruments = ctx.instruments
        if not all(_hook(i, "should_run")(mod, self.info) is not False for i in instruments):
            return mod
        for inst in instruments:
            _hook(inst, "run_before_pass")(mod, self.info)
        out = self.transform(mod, ctx)
        for inst in instruments:
            _hook(inst, "run_after_pass")(out, self.info)
        return out

    def transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        raise NotImplementedError

    @property
    def name(self) -> str:
        return self.info.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.info.name}, opt_level={self.info.opt_level})"


class ModulePass(Pass):
    def __init__(self, fn: Callable, info: PassInfo):
        self.fn = fn
        self.info = info

    def transform(self, mod, ctx):
        return self.fn(mod, ctx)


class FunctionPass(Pass):
    """Applies ``fn(func, mod, ctx)`` to every global function except primitive ones."""

    def __init__(self, fn: Callable, info: PassInfo):
        self.fn = fn
        self.info = info

    def transform(self, mod, ctx):
        functions = {}
        for gv, func in mod.functions.items():
            functions[gv] = func if func.is_primitive else self.fn(func, mod, ctx)
        return mod.with_functions(functions)


class Sequential(Pass):
    """Runs passes in order, skipping those the context does not enable."""

    def __init__(self, passes: Sequence[Pass] = (), opt_level: int = 0,
                 name: str = "sequential", required: Sequence[str] = ()):
        self.passes = list(passes)
        self.info = PassInfo(name, opt_level, tuple(required))

    def transform(self, mod, ctx):
        for p in self.passes:
            if ctx.pass_enabled(p.info):
                for req in p.info.required:
                    mod = get_pass(req)(mod)
                mod = p(mod)
        return mod


def _make_pass(kind, pass_func, opt_level, name, required):
    def create(fn_or_cls):
        info = PassInfo(name or fn_or_cls.__name__, opt_level or 0, tuple(required or ()))
        if inspect.isclass(fn_or_cls):
            method = "transform_module" if kind is ModulePass else "transform_function"

            @functools.wraps(fn_or_cls, updated=())
            def factory(*args, **kwargs):
                obj = fn_or_cls(*args, **kwargs)
                return kind(getattr(obj, method), info)

            return factory
        return kind(fn_or_cls, info)

    return create(pass_func) if pass_func is not None else create


def module_pass(pass_func=None, opt_level: int | None = None, name: str | None = None,
                required: Sequence[str] | None = None):
    """Decorate ``fn(mod, ctx) -> mod`` (or a class with ``transform_module``)."""
    return _make_pass(ModulePass, pass_func, opt_level, name, required)


def function_pass(pass_func=None, opt_level: int | None = None, name: str | None = None,
                  required: Sequence[str] | None = None):
    """Decorate ``fn(func, mod, ctx) -> func`` (or a class with ``transform_function``)."""
    return _make_pass(FunctionPass, pass_func, opt_level, name, required)


_PASS_FACTORIES: dict[str, Callable[[], Pass]] = {}


def register_pass(name: str, factory: Callable[[], Pass]) -> None:
    """Make a pass findable by name, so other passes can list it in ``required``."""
    _PASS_FACTORIES[name] = factory


def get_pass(name: str) -> Pass:
    try:
        return _PASS_FACTORIES[name]()
    except KeyError:
        raise Error(f"unknown pass {name!r}; known: {', '.join(sorted(_PASS_FACTORIES))}") from None

