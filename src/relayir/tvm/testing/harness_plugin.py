"""The pytest plugin ``run_tvm_tests`` loads first (``-p relayir.tvm.testing.harness_plugin``).

It does two things and nothing else (no stubs, no patched test files):

- installs the ``tvm`` import alias before any conftest or test module imports ``tvm``,
  so that TVM's own root ``conftest.py`` (``pytest_plugins = ["tvm.testing.plugin"]``)
  loads ``relayir.tvm.testing.plugin``;
- writes the collected node ids to ``$RELAYIR_TVM_HARNESS_COLLECTED``, so that a file
  stopped at its time limit still says how many of its tests never ran (pytest's JUnit
  XML lists only the tests that reported).
"""

from __future__ import annotations

import json
import os

from ..alias import install_alias

install_alias()

COLLECTED_ENV = "RELAYIR_TVM_HARNESS_COLLECTED"


def pytest_collection_finish(session) -> None:
    path = os.environ.get(COLLECTED_ENV)
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump([item.nodeid for item in session.items], f)
