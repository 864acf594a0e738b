"""What the ``relayir.tvm`` tests share: ``needs_cc``, a fixture that skips a test when
no C compiler is found (target ``"llvm"`` compiles C)."""

import pytest

from relayir.codegen import CompilerNotFoundError, find_compiler


@pytest.fixture
def needs_cc():
    try:
        find_compiler()
    except CompilerNotFoundError:
        pytest.skip("target 'llvm' compiles C, and there is no C compiler on this machine")
