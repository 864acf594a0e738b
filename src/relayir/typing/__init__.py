"""Type inference: unification plus type-relation solving."""

from .infer import TypeInferencer, infer_expr, infer_module
from .solver import TypeSolver

__all__ = ["TypeInferencer", "TypeSolver", "infer_expr", "infer_module"]
