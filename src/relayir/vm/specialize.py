"""C kernels for the primitive functions one compiled dynamic kernel cannot take,
compiled at run time for the shapes (and shape values) a call brings.

Two kinds of call would otherwise run the function's numpy reference (the oracle's own
code, issue 22):

- a *data-dependent* function (``InvokeDataDependent``): a ``dyn`` op whose shape input
  is computed inside the function, or one without a C compute (``dyn.strided_slice``,
  ``dyn.sum``, ...). Bound to the values of the parameters its shape inputs are computed
  from, ``DynamicToStatic`` turns each such op into its static twin: an ordinary static
  function, lowered and compiled like any other;
- a dynamic function whose C kernel reads two dims as one (``shape_func.name_any_dims``)
  called where one of them is 1 and broadcasts: at the call's static shapes the kernel
  knows which dims broadcast; and a dynamic function the C back end cannot lower with
  symbolic dims, which it lowers at the call's static shapes.

``Specializer(name, func, target)`` keeps one kernel per signature (input shapes and
dtypes, and the bytes of the shape-deciding inputs), compiled on first sight (the kernel
cache makes a repeat in another process a lookup). A function that cannot be
specialised (an op whose result shape depends on data values: ``argwhere``, ``unique``,
NMS; a tuple parameter; shape inputs too large to key on) or a signature whose static
form does not lower runs the reference, counted by reason in ``reference_runs``. At
most ``MAX_SIGNATURES`` signatures compile per function; later ones run the reference.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..backend.lowering import LoweringError, is_static, lower
from ..backend.target import Target
from ..errors import Error
from ..ir.expr import Call, Constant, Function, Op, Var
from ..ir.functor import post_order
from ..ir.module import IRModule
from ..ir.types import TensorType
from ..op.dynamic import DYNAMIC
from ..runtime.c_kernels import CKernel
from ..runtime.numpy_kernels import NumpyKernel
from ..transform.bind import bind
from ..transform.dynamic_to_static import dynamic_to_static
from ..typing.infer import infer_module
from .shape_func import DATA_DEPENDENT_OPS

MAX_SIGNATURES = 16  # compiled kernels per function; beyond, the reference runs
MAX_KEY_ELEMENTS = 4096  # a shape-deciding input larger than this is not keyed on


class Specializer:
    """See the module docstring. ``evaluate(*inputs)`` returns fresh outputs (a
    data-dependent call); ``call_unchecked(*inputs, *outputs)`` writes allocated ones
    (a call at shapes the dynamic kernel cannot take)."""

    def __init__(self, name: str, func: Function, target):
        self.name = name
        self.func = func
        self.target = Target.parse(target)
        self.reference = NumpyKernel(name, func)
        self.kernels: dict = {}  # signature -> (CKernel, its library) or the reason it failed
        self.reference_runs: Counter = Counter()  # why -> calls that ran the reference
        self.compiled_runs = 0
        self.why_not = why_not_specialisable(func)
        params = set(func.params)
        self.deciding = [k for k, p in enumerate(func.params) if p in _shape_params(func, params)]

    # -- calls
    def evaluate(self, *inputs: np.ndarray) -> list[np.ndarray]:
        kernel = self._kernel(inputs)
        if kernel is None:
            return self.reference.evaluate(*inputs)
        outputs = [np.empty(t.shape, t.dtype) for t in kernel.output_types]
        kernel.call_unchecked(*self._kept(inputs), *outputs)
        return outputs

    def run(self, *arrays: np.ndarray) -> None:
        """``call_unchecked`` as an ``InvokePacked`` call (no status)."""
        self.call_unchecked(*arrays)

    def call_unchecked(self, *arrays: np.ndarray) -> bool:
        """Whether the reference ran."""
        n = len(self.func.params)
        kernel = self._kernel(arrays[:n])
        if kernel is None:
            self.reference.call_unchecked(*arrays)
            return True
        kernel.call_unchecked(*self._kept(arrays[:n]), *arrays[n:])
        return False

    # -- signatures
    def _kept(self, inputs) -> list:
        return [a for k, a in enumerate(inputs) if k not in self.deciding]

    def _kernel(self, inputs) -> CKernel | None:
        if self.why_not:
            return self._fallback(self.why_not)
        key = tuple((a.shape, a.dtype.str) for a in inputs)
        key += tuple(inputs[k].tobytes() for k in self.deciding)
        entry = self.kernels.get(key)
        if entry is None:
            if len(self.kernels) >= MAX_SIGNATURES:
                return self._fallback(f"more than {MAX_SIGNATURES} signatures")
            entry = self.kernels[key] = self._compile(inputs)
        if isinstance(entry, str):
            return self._fallback(entry)
        self.compiled_runs += 1
        return entry[0]

    def _fallback(self, why: str) -> None:
        self.reference_runs[why] += 1
        return None

    def _compile(self, inputs) -> tuple | str:
        """``(kernel, library)`` for these inputs, or why there is none."""
        if any(inputs[k].size > MAX_KEY_ELEMENTS for k in self.deciding):
            return f"a shape input of more than {MAX_KEY_ELEMENTS} elements"
        binds, params = {}, []
        for k, (p, a) in enumerate(zip(self.func.params, inputs)):
            if k in self.deciding:
                binds[p] = Constant(np.array(a))
            else:
                v = Var(p.name_hint, TensorType(tuple(a.shape), a.dtype.name))
                binds[p] = v
                params.append(v)
        # without ``Primitive`` while rewriting: rewrites leave primitive functions alone
        fn = Function(params, bind(self.func.body, binds))
        try:
            mod = IRModule.from_expr(fn)
            infer_module(mod)
            static = dynamic_to_static(mod)["main"]
            if not is_static(static) or _dyn_ops(static):
                return "its static form keeps dynamic shapes"
            static = Function(static.params, static.body, None, (), self.func.attrs)
            infer_module(IRModule.from_expr(static))
            name = f"{self.name}_s{len(self.kernels)}"
            lib = lower([(name, static)], self.target)
        except (Error, LoweringError) as exc:
            return f"its static form does not compile: {exc}"
        kernel = lib[name]
        if not isinstance(kernel, CKernel):
            return f"its static form runs a reference: {getattr(kernel, 'reason', '')}"
        return kernel, lib


def why_not_specialisable(func: Function) -> str:
    """Why no static form exists ("" when one does)."""
    if any(not isinstance(p.checked_type, TensorType) for p in func.params):
        return "a tuple parameter"
    for node in post_order(func.body):
        if type(node) is not Call or type(node.op) is not Op:
            continue
        name = node.op.name
        if name.startswith("dyn.") and name not in DYNAMIC:
            return f"{name} has no static twin"
        static = DYNAMIC[name].static if name in DYNAMIC else name  # what it becomes
        if static in DATA_DEPENDENT_OPS:
            return f"{name}'s result shape depends on its data"
    return ""


def _shape_params(func: Function, params: set) -> set:
    """The parameters the shape inputs of ``func``'s ``dyn`` calls are computed from."""
    out: set = set()
    for node in post_order(func.body):
        if type(node) is Call and type(node.op) is Op and node.op.name in DYNAMIC:
            for i in DYNAMIC[node.op.name].shape_args:
                out.update(n for n in post_order(node.args[i]) if n in params)
    return out


def _dyn_ops(fn: Function) -> list[str]:
    return [n.op.name for n in post_order(fn.body)
            if type(n) is Call and type(n.op) is Op and n.op.name.startswith("dyn.")]


__all__ = ["MAX_SIGNATURES", "Specializer", "why_not_specialisable"]
