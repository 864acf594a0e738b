import pytest


@pytest.fixture
def round_trip_byte_limit():
    """The root conftest's print → parse round trip of every typed module, only for
    modules whose constants are small. ``build`` binds the weights, and printing
    megabytes of them as base64 at every ``InferType`` would take most of these tests'
    time (ten seconds for resnet18) while checking only what the text-format tests check."""
    return 1 << 16
