"""The kernel interface between ``build`` and the executors, and the numpy kernels.

A *kernel* is one compiled primitive function (one ``Primitive=1`` group of
``FuseOps``) in destination-passing style: it reads its input arrays and writes its
output arrays, which the caller allocated. It has

- ``name``: the symbol the graph JSON refers to (``func_name``), a C identifier;
- ``input_types`` / ``output_types``: flat tuples of static ``TensorType``\\ s (tuple
  parameters and tuple results are flattened, as in TVM's graph JSON);
- ``bind(arrays) -> callable``: checks ``arrays`` (inputs then outputs) once against the
  types and returns a zero-argument callable that runs the kernel on exactly those
  arrays. The graph executor binds every node at set-up, so its run loop is a loop
  over these callables. A kernel reports a failure by raising, or by returning a
  non-zero int (the C ABI's status code); ``None`` or ``0`` is success;
- ``__call__(*arrays)``: one checked call (tests, debugging).

A C kernel (ABI ``int32_t name(void* const* args, const int64_t* dims)``) plugs in by
implementing ``bind`` as "build the pointer and dims arrays once, return
``functools.partial(cfunc, args, dims)``": nothing in the executor changes.

Dynamic shapes (the VM only): a kernel whose ``dim_names`` is non-empty serves every
shape; its ``input_types`` / ``output_types`` hold ``SymbolicDim``\\ s named as in
``dim_names``, and the value of each dim (the C ``dims`` array, in ``dim_names`` order) is
the extent of the first argument (inputs then outputs) that has that name on that axis.
``call_dims_unchecked(dims, *arrays)`` makes one such call; ``bind`` / ``check`` compare
exact shapes and so serve static kernels only.

Kernels come in a *kernel library* (``get_lib()`` of a built module): a name → kernel
map plus what ``export_library`` needs to save it (``kernel_table()``: JSON entries,
``files()``: extra archive members such as ``lib.so``). ``load_library`` rebuilds a
library from those (``runtime.libraries``: one loader per ``kind``).

The back end makes libraries (``backend.lowering``); this layer defines what they are,
runs them and loads saved ones, so neither the runtime nor the back end imports a code
generator to find out what a kernel is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..errors import KernelError
from ..ir.types import TensorType, TupleType, Type


def flatten_type(ty: Type) -> list[TensorType]:
    """The tensor types of a (nested) tuple type, in order (TVM's ``FlattenTupleType``)."""
    out: list[TensorType] = []
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(reversed(t.fields))
        elif isinstance(t, TensorType):
            out.append(t)
        else:
            raise KernelError(f"a kernel argument must be a tensor or a tuple of them, found {t}")
    return out


def type_text(t: TensorType) -> str:
    return f"{tuple(t.shape)} {t.dtype}"


def check_arrays(name: str, types: Sequence[TensorType], arrays: Sequence, what: str) -> None:
    """Raise a clear error unless every array has its type's exact shape and dtype."""
    if len(arrays) != len(types):
        raise KernelError(
            f"kernel {name}: expected {len(types)} {what} arrays, found {len(arrays)}")
    for i, (t, a) in enumerate(zip(types, arrays)):
        if not isinstance(a, np.ndarray):
            raise KernelError(f"kernel {name}: {what} {i} is a {type(a).__name__}, not an ndarray")
        if a.dtype.name != t.dtype or a.shape != tuple(t.shape):
            raise KernelError(
                f"kernel {name}: {what} {i} expected {type_text(t)}, "
                f"found {a.shape} {a.dtype.name}")
        if what == "output" and not a.flags.writeable:
            raise KernelError(f"kernel {name}: output {i} is read-only")


class Kernel:
    """Base of kernels; subclasses implement ``bind``. See the module docstring."""

    name: str
    input_types: tuple[TensorType, ...]
    output_types: tuple[TensorType, ...]
    dim_names: tuple[str, ...] = ()  # symbolic dims, in the order of the C ``dims`` array

    def check(self, arrays: Sequence[np.ndarray]) -> None:
        n = len(self.input_types)
        if len(arrays) != n + len(self.output_types):
            raise KernelError(
                f"kernel {self.name} takes {n} inputs and {len(self.output_types)} outputs, "
                f"found {len(arrays)} arrays")
        check_arrays(self.name, self.input_types, arrays[:n], "input")
        check_arrays(self.name, self.output_types, arrays[n:], "output")

    def bind(self, arrays: Sequence[np.ndarray]) -> Callable[[], int | None]:
        raise NotImplementedError

    def __call__(self, *arrays: np.ndarray) -> None:
        status = self.bind(arrays)()
        if status:
            raise KernelError(f"kernel {self.name} failed with status {status}")

    def call_unchecked(self, *arrays: np.ndarray) -> int | None:
        """One call on arrays whose types the caller guarantees (the VM allocates them
        from the static types it compiled against); returns the status like a bound
        call. Subclasses make it cheaper than ``bind`` + call."""
        return self.bind(arrays)()

    def call_dims_unchecked(self, dims, *arrays: np.ndarray) -> int | None:
        """``call_unchecked`` of a kernel with symbolic dims: ``dims`` holds their values
        in ``dim_names`` order (a kernel that computes from the arrays ignores them)."""
        return self.call_unchecked(*arrays)

    def __repr__(self) -> str:
        ins = ", ".join(map(type_text, self.input_types))
        outs = ", ".join(map(type_text, self.output_types))
        return f"<{type(self).__name__} {self.name}({ins}) -> ({outs})>"


class KernelLibrary:
    """The kernels of one built module, by name, and how to save them."""

    kind = "abstract"

    def __init__(self, kernels: dict[str, Kernel], target: str):
        self.kernels = dict(kernels)
        self.target = target

    def __getitem__(self, name: str) -> Kernel:
        try:
            return self.kernels[name]
        except KeyError:
            raise KernelError(f"the {self.kind} kernel library has no kernel {name!r}") from None

    def __contains__(self, name: str) -> bool:
        return name in self.kernels

    def __len__(self) -> int:
        return len(self.kernels)

    def __iter__(self):
        return iter(self.kernels)

    def kernel_table(self) -> list[dict]:
        """JSON-able entries saved in ``meta.json`` (one per kernel); a symbolic dim is
        saved as its name (``"?"`` for ``Any``), and a dynamic kernel adds ``dims``."""
        table = []
        for k in self.kernels.values():
            entry = {"name": k.name, "kind": self.kind,
                     "inputs": [[json_shape(t), t.dtype] for t in k.input_types],
                     "outputs": [[json_shape(t), t.dtype] for t in k.output_types]}
            if k.dim_names:
                entry["dims"] = list(k.dim_names)
            table.append(entry)
        return table

    def files(self) -> dict[str, bytes]:
        """Extra archive members (a C library adds ``lib.so``)."""
        return {}

    def references(self) -> dict[str, str]:
        """The kernels of a compiled library that run as numpy references, each with
        why (none on the numpy target, whose kernels are all references by choice)."""
        return {k.name: k.reason for k in self.kernels.values() if getattr(k, "reason", "")}

    def describe_references(self) -> str:
        """One line for users: ``2 of 31 kernels run as numpy references: f (why); ...``
        or ``all 31 kernels are C``; the numpy target says so."""
        if self.kind == "numpy":
            return f"all {len(self)} kernels run as numpy references (target numpy)"
        refs = self.references()
        # a data-dependent function of a VM on a C target: a reference kernel without a
        # reason, compiled to C per call signature when it runs (vm/specialize.py)
        later = sum(1 for k in self.kernels.values()
                    if hasattr(k, "func") and not getattr(k, "reason", ""))
        also = f" ({later} compiled at run time for each shape value they meet)" if later else ""
        if not refs:
            return f"all {len(self)} kernels are C{also}"
        reasons = "; ".join(f"{name} ({why})" for name, why in sorted(refs.items()))
        return f"{len(refs)} of {len(self)} kernels run as numpy references{also}: {reasons}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {len(self)} kernels, target {self.target}>"


def json_shape(t: TensorType) -> list:
    return [d if isinstance(d, int) else str(d) for d in t.shape]


__all__ = ["Kernel", "KernelError", "KernelLibrary", "check_arrays", "flatten_type", "json_shape",
           "type_text"]
