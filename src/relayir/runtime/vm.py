"""``relayir.runtime.vm``: Relay's location of the VM runtime, an alias of ``relayir.vm``
(bytecode, ``Executable``, ``VirtualMachine``) for code written against TVM Relay."""

from ..vm import *  # noqa: F403
from ..vm import __all__  # noqa: F401
