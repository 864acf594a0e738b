"""Small programs the explorer knows by name (``relayir explore list``): the VM's
control flow and algebraic data types at work, written in Relay text with the prelude.

- ``list``: build a ``List`` with ``Cons``/``Nil``, ``@map`` a closure over it and
  ``@foldl`` it to a sum (``alloc_adt``, ``get_tag``, ``get_field``, closures, recursion);
- ``tree``: a small rose tree (``Rose(value, List[Tree])``) and its ``@size`` by match.
"""

from __future__ import annotations

from ..errors import Error
from ..ir.module import IRModule
from ..ir.parser import parse
from ..prelude import Prelude

EXAMPLES = {
    "list": """
def @main(%a: Tensor[(2), float32], %b: Tensor[(2), float32]) {
  %0 = Cons(%a, Cons(%b, Cons(%a, Nil)));
  %1 = @map(fn (%x: Tensor[(2), float32]) { multiply(%x, %b) }, %0);
  (@foldl(fn (%acc: Tensor[(2), float32], %x: Tensor[(2), float32]) { add(%acc, %x) },
          zeros(shape=[2], dtype="float32"), %1), %1)
}""",
    "tree": """
def @main(%x: int32) -> int32 {
  let %leaf = Rose(%x, Nil);
  @size(Rose(%x, Cons(%leaf, Cons(Rose(%x, Cons(%leaf, Cons(%leaf, Nil))), Nil))))
}""",
}


def with_prelude(text: str, source: str = "<text>") -> IRModule:
    """Relay text that may use the prelude's types and functions, parsed."""
    mod = IRModule()
    Prelude(mod)
    return parse(text, source, init_module=mod)


def example_module(name: str) -> IRModule:
    try:
        text = EXAMPLES[name]
    except KeyError:
        raise Error(f"no example program {name!r}; the examples are "
                    f"{', '.join(EXAMPLES)}") from None
    return with_prelude(text, f"<example {name}>")


__all__ = ["EXAMPLES", "example_module", "with_prelude"]
