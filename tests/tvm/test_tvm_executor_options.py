"""``relay.backend.Executor`` / ``Runtime``: TVM's registered names and options, checked
when one is made, with TVM's messages."""

from __future__ import annotations

import pytest

from relayir.tvm import TVMError
from relayir.tvm.relay.backend import Executor, Runtime


def test_options_default_and_are_checked():
    aot = Executor("aot", {"interface-api": "c"})
    assert aot.name == "aot" and aot["interface-api"] == "c" and not aot["unpacked-api"]
    assert "interface-api" in aot and "woof" not in aot
    assert not Executor("graph")["link-params"] and str(Runtime()) == "cpp"
    with pytest.raises(TVMError, match='Executor "woof" is not defined'):
        Executor("woof")
    with pytest.raises(TVMError, match='Attribute "woof" is not available on this Runtime'):
        Runtime("crt", {"woof": 1})
    with pytest.raises(TVMError, match='should have type "runtime.BoxBool" but instead found '
                                       '"runtime.String"'):
        Runtime("crt", {"system-lib": "yes"})


def test_registries_list_names_and_option_types():
    assert {"graph", "aot"} <= set(Executor.list_registered())
    assert Runtime.list_registered_options(Runtime("crt")) == {"system-lib": "runtime.BoxBool"}
    assert Executor.list_registered_options("aot")["interface-api"] == "runtime.String"
    with pytest.raises(TVMError, match='Runtime "woof" is not defined'):
        Runtime.list_registered_options("woof")
