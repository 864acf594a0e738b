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



class NotInRelayirError(Error, NotImplementedError):
    """A TVM API relayir does not offer: the message names the API and says why."""


def not_in_relayir(api: str, why: str = ""):
    """A stand-in for the TVM API ``api`` (a function or a class in TVM) that raises
    ``NotInRelayirError`` when called or instantiated, so that a module importing it,
    or subclassing it at import time (``class C(DFPatternCallback)``), still loads."""
    message = f"{api} is not part of relayir" + (f": {why}" if why else "")

    def __new__(cls, *args, **kwargs):
        raise NotInRelayirError(message)

    name = api.rsplit(".", 1)[-1]
    return type(name, (), {"__new__": __new__, "__doc__": f"``{api}``: not part of "
                           f"relayir. {why}", "__module__": api.rsplit(".", 1)[0]})


def refusing_module(module: str, why: str):
    """A module ``__getattr__`` for a TVM module relayir does not offer: every public
    name is a ``not_in_relayir`` function (importing the name works, using it raises
    ``NotInRelayirError`` naming it)."""
    tvm_name = module.replace("relayir.tvm", "tvm", 1)

    def __getattr__(name: str):
        if name.startswith("__"):  # Python's own probes (__path__, __wrapped__, ...)
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return not_in_relayir(f"{tvm_name}.{name}", why)

    return __getattr__


def missing_attribute(module: str, name: str) -> AttributeError:
    """The AttributeError for ``module.name`` that TVM has and relayir.tvm does not."""
    tvm_name = module.replace("relayir.tvm", "tvm", 1)
    return AttributeError(f"{tvm_name}.{name} is not part of relayir (module {module!r} has no "
                          f"attribute {name!r}; docs/tvm-compat.md lists what relayir.tvm "
                          f"covers)")


__all__ = ["DiagnosticError", "InternalError", "NotInRelayirError", "OpAttributeInvalid",
           "OpAttributeRequired", "OpAttributeUnImplemented", "OpError", "OpNotImplemented",
           "ParseError", "RPCError", "TVMError", "TypeInferenceError", "missing_attribute",
           "not_in_relayir", "refusing_module"]
