"""``tvm.ir.instrument`` / ``tvm.instrument``: ``pass_instrument``, ``PassInstrument`` and
``PassTimingInstrument`` over relayir's instruments; a Relay pass is seen once by them
(the layer's type annotation after a pass is part of that pass)."""

import relayir.tvm as tvm
from relayir.tvm import relay
from relayir.tvm.ir.instrument import PassInstrument, PassTimingInstrument, pass_instrument


def _mod():
    x = relay.var("x", shape=(3, 4))
    return tvm.IRModule.from_expr(relay.add(x, x))


def test_decorated_and_subclassed_instruments_see_each_pass_once():
    @pass_instrument
    class Names:
        def __init__(self):
            self.events = []

        def run_before_pass(self, mod, info):
            self.events.append(info.name)

    class Skip(PassInstrument):
        def should_run(self, mod, info):
            return info.name != "ToANormalForm"

    names = Names()
    assert isinstance(names, PassInstrument) and tvm.instrument.pass_instrument is pass_instrument
    with tvm.transform.PassContext(instruments=[Skip(), names]):
        mod = relay.transform.ToANormalForm()(_mod())
        relay.transform.InferType()(mod)
        relay.transform.FoldConstant()(mod)
    assert names.events == ["InferType", "FoldConstant"]


def test_timing_profile_lasts_until_its_context_exits():
    timing = PassTimingInstrument()
    ctx = tvm.transform.PassContext.current()
    ctx.override_instruments([timing])
    relay.transform.InferType()(_mod())
    assert "InferType" in timing.render()
    ctx.override_instruments(None)
    assert timing.render() == ""


def test_relay_function_pass_types_its_result():
    @relay.transform.function_pass(opt_level=1)
    class Replace:
        def __init__(self, new):
            self.new = new

        def transform_function(self, func, mod, ctx):
            return self.new

    x = relay.var("x", shape=(2,))
    p = Replace(relay.Function([x], relay.log(x)))
    assert isinstance(p, relay.transform.FunctionPass) and p.info.name == "Replace"
    out = p(tvm.IRModule.from_expr(relay.Function([x], x)))
    assert out["main"].ret_type == relay.TensorType((2,))  # written in, as Relay's
