"""What the compiler, cache and loader tests share: the ``needs_cc`` marker, which skips a
test when no C compiler is found, and ``cache``, a compile cache of the test's own."""

import pytest

from relayir.codegen import has_compiler


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "needs_cc: compiles C; skipped when no C compiler is found")




def pytest_collection_modifyitems(config, items):
    wanting = [item for item in items if item.get_closest_marker("needs_cc")]
    if wanting and not has_compiler():
        skip = pytest.mark.skip(reason="no C compiler on this machine")
        for item in wanting:
            item.add_marker(skip)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty compile cache under ``tmp_path``, with no compiler settings from the
    environment (``CC``, ``RELAYIR_CFLAGS``, ``RELAYIR_NO_CACHE``)."""
    for var in ("CC", "RELAYIR_CFLAGS", "RELAYIR_NO_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("RELAYIR_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"
