"""``tvm.error``: TVM's error classes are relayir's.

TVM raises ``TVMError`` (and ``DiagnosticError`` from the parser and the type checker);
relayir raises ``relayir.Error`` subclasses with messages that name the place. Every
TVM name here is ``relayir.Error`` or one of its subclasses, so ``except
tvm.error.TVMError`` / ``pytest.raises(tvm.error.DiagnosticError)`` catch what relayir
raises for the same mistake.
"""

from ..errors import Error, OpError, ParseError, TypeInferenceError

TVMError = Error
DiagnosticError = Error  # parse and type errors: ParseError, TypeInferenceError, ...
InternalError = Error
RPCError = Error
OpError = OpError
OpNotImplemented = OpError
OpAttributeRequired = OpError
OpAttributeInvalid = OpError
OpAttributeUnImplemented = OpError

__all__ = ["DiagnosticError", "InternalError", "OpAttributeInvalid", "OpAttributeRequired",
           "OpAttributeUnImplemented", "OpError", "OpNotImplemented", "ParseError", "RPCError",
           "TVMError", "TypeInferenceError"]
