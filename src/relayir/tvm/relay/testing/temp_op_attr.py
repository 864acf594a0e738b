"""``relay.testing.temp_op_attr.TempOpAttr``: an op attribute set for the duration of a
``with`` block. The attributes the layer runs are the legalisation hooks
(``FTVMLegalize``, ``FTVMQnnLegalize``: ``relay/_legalize.py``); any other key (layout
alteration, strategies, ...) is refused naming it, since relayir reads no such hook."""

from __future__ import annotations

from ....ir.op import get_op
from .._legalize import hook_table

_MISSING = object()


class TempOpAttr:
    def __init__(self, op_name: str, attr_key: str, attr_value):
        get_op(op_name)  # an unknown op is an error here, as in Relay
        self.table = hook_table(attr_key, "tvm.relay.testing.temp_op_attr.TempOpAttr")
        self.op_name = op_name
        self.attr_value = attr_value

    def __enter__(self):
        self.older = self.table.get(self.op_name, _MISSING)
        self.table[self.op_name] = self.attr_value
        return self

    def __exit__(self, *exc):
        if self.older is _MISSING:
            self.table.pop(self.op_name, None)
        else:
            self.table[self.op_name] = self.older
