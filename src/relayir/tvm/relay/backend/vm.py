"""``relay.backend.vm``: Relay's VM compiler names (``relay.vm``)."""

from ..vm import VMCompiler, VMExecutor, compile  # noqa: A004

__all__ = ["VMCompiler", "VMExecutor", "compile"]
