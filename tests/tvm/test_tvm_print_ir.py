"""``tvm.transform.PrintIR`` writes the module to standard error headed ``PrintIR(...)``,
as TVM logs it, and leaves the module unchanged."""

from relayir.tvm import IRModule, relay, transform


def test_print_ir_writes_the_module_to_stderr(capfd):
    x = relay.var("x", shape=(2,))
    mod = IRModule.from_expr(relay.Function([x], relay.multiply(x, relay.const(2.0))))
    out = transform.Sequential([relay.transform.InferType(), transform.PrintIR("here")])(mod)
    captured = capfd.readouterr()
    assert "PrintIR(here):" in captured.err and "multiply" in captured.err
    assert captured.out == ""
    assert relay.analysis.well_formed(out["main"])
