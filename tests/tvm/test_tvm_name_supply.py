"""``tvm.ir.supply`` (``NameSupply``, ``GlobalVarSupply``) and the C name spellings of
``tvm.relay.backend.name_transforms`` / ``tvm.runtime.name_transforms``: names are
handed out once, a held global comes back as itself, and wrong input is a
``tvm.TVMError`` naming the mistake."""

import pytest

import relayir
import relayir.tvm as tvm
from relayir.tvm import relay
from relayir.tvm.ir.supply import MODULE_PREFIX, GlobalVarSupply, NameSupply
from relayir.tvm.relay.backend.name_transforms import (
    prefix_generated_name,
    prefix_name,
    to_c_constant_style,
    to_c_function_style,
    to_c_variable_style,
)
from relayir.tvm.runtime.name_transforms import sanitize_name


def _module(*names):
    mod = tvm.IRModule()
    for name in names:
        x = relay.var("x", shape=(2,))
        mod[tvm.ir.GlobalVar(name)] = relay.Function([x], relay.add(x, x))
    return mod


def test_c_spellings_of_a_prefixed_name():
    name = prefix_generated_name(["my", "model", "Run2"])
    assert name == "TVMGen_my_model_Run2"
    assert to_c_function_style(name) == "TVMGenMyModelRun2"
    assert to_c_variable_style(name) == "tvmgen_my_model_run2"
    assert to_c_constant_style(name) == "TVMGEN_MY_MODEL_RUN2"
    assert prefix_name("cpu") == prefix_name(("cpu",)) == "TVM_cpu"


@pytest.mark.parametrize(("call", "message"), [
    (lambda: to_c_function_style("relay_f"), "Function not TVM prefixed: 'relay_f'"),
    (lambda: to_c_variable_style(""), "Variable name is empty"),
    (lambda: to_c_constant_style("x"), "Constant not TVM prefixed"),
    (lambda: prefix_name(""), "Name is empty"),
    (lambda: prefix_generated_name([]), "Name segments empty"),
    (lambda: prefix_name(["a", ""]), r"Name segment is empty in \['a', ''\]"),
    (lambda: sanitize_name(""), "Name is empty"),
])
def test_bad_names_raise_tvm_error(call, message):
    with pytest.raises(tvm.TVMError, match=message):
        call()


def test_sanitize_name_keeps_length_and_adds_no_prefix():
    assert sanitize_name("conv2d/weight:0") == "conv2d_weight_0"
    assert sanitize_name("__x") == "__x"  # relayir's kernels would get "k_"; TVM adds nothing
    assert sanitize_name("1é") == "1_"
    assert sanitize_name("a" * 200) == "a" * 200


def test_name_supply_counts_suffixes_per_name():
    supply = NameSupply("mod")
    assert [supply.fresh_name("f") for _ in range(3)] == ["mod_f", "mod_f_1", "mod_f_2"]
    assert supply.reserve_name("g_1") == "mod_g_1"
    assert supply.fresh_name("g") == "mod_g"
    assert supply.fresh_name("g") == "mod_g_2"  # _1 was reserved
    assert supply.fresh_name("h", add_underscore=False) == "mod_h"
    assert supply.fresh_name("h", add_underscore=False) == "mod_h1"
    assert supply.fresh_name("nn.dense", add_prefix=False) == "nn_dense"
    assert supply.contains_name("nn_dense", add_prefix=False)
    assert not supply.contains_name("nn_dense")
    assert NameSupply().fresh_name("f") == "f"  # no prefix, no leading "_"


def test_global_var_supply_shares_its_name_supply():
    names = NameSupply("p")
    supply = GlobalVarSupply(names)
    made = supply.fresh_global("f")
    assert made.name_hint == "p_f" and names.contains_name("f")
    assert supply.unique_global_for("f") is made
    assert supply.fresh_global("f").name_hint == "p_f_1"
    assert names.fresh_name("f") == "p_f_2"


def test_global_var_supply_from_modules_holds_their_globals():
    first, second = _module("main", "helper"), _module("other")
    supply = GlobalVarSupply([first, second])
    assert supply.name_supply.prefix == MODULE_PREFIX
    assert supply.unique_global_for("helper", add_prefix=False) is first.get_global_var("helper")
    assert supply.unique_global_for("other", add_prefix=False) is second.get_global_var("other")
    assert supply.fresh_global("main", add_prefix=False).name_hint == "main_1"
    assert supply.fresh_global("main").name_hint == f"{MODULE_PREFIX}_main"
    assert GlobalVarSupply([]).name_supply.prefix == ""


def test_global_var_supply_refuses_conflicts_and_bad_input():
    supply = GlobalVarSupply()
    supply.reserve_global(relayir.GlobalVar("f"))
    with pytest.raises(tvm.TVMError, match="GlobalVar @f conflicts by name"):
        supply.reserve_global(relayir.GlobalVar("f"))
    replacement = relayir.GlobalVar("f")
    supply.reserve_global(replacement, allow_conflict=True)
    assert supply.unique_global_for("f") is replacement
    with pytest.raises(tvm.TVMError, match="found an item of type int"):
        GlobalVarSupply([_module("main"), 3])


def test_modules_import_through_the_alias():
    tvm.install_alias()
    try:
        from tvm.ir.supply import NameSupply as AliasNameSupply
        from tvm.relay.backend.name_transforms import prefix_name as alias_prefix_name
    finally:
        tvm.uninstall_alias()
    assert AliasNameSupply is NameSupply and alias_prefix_name is prefix_name
