"""The IR: expressions, types, ADTs, modules, visitors, structural equality, text."""

from .adt import (
    Clause,
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
    pattern_vars,
)
from .analysis import (
    all_vars,
    bound_vars,
    check_well_formed,
    free_type_vars,
    free_vars,
    well_formed,
)
from .expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Span,
    Tuple,
    TupleGetItem,
    Var,
    as_expr,
    const,
    var,
)
from .functor import ExprFunctor, ExprMutator, ExprVisitor, post_order
from .module import IRModule
from .structural import assert_structural_equal, structural_equal, structural_hash
from .types import (
    DTYPES,
    Any,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    Kind,
    RefType,
    SymbolicDim,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
    scalar_type,
    unit_type,
)
