import pytest

import relayir as relay

_CONSTANT_BYTES_LIMIT = 1 << 16
_NODE_LIMIT = 5000


@pytest.fixture(autouse=True)
def _round_trip_every_typed_module(monkeypatch):
    """The root conftest's print → parse round trip of every typed module, for modules
    whose constants are small. ``build`` binds the weights, and printing megabytes of
    them as base64 at every ``InferType`` would take most of these tests' time (ten
    seconds for resnet18) while checking only what the text-format tests check."""
    from relayir.ir.expr import Constant
    from relayir.ir.functor import post_order
    from relayir.ir.structural import assert_structural_equal
    from relayir.typing.infer import TypeInferencer

    original = TypeInferencer.infer_module

    def small(mod) -> bool:
        nodes = size = 0
        for fn in mod.functions.values():
            for n in post_order(fn):
                nodes += 1
                if type(n) is Constant:
                    size += n.data.nbytes
                if nodes > _NODE_LIMIT or size > _CONSTANT_BYTES_LIMIT:
                    return False
        return True

    def checked(self):
        mod = self.mod
        if mod.functions and small(mod):
            assert_structural_equal(relay.parse(mod.astext()), mod)
        return original(self)

    monkeypatch.setattr(TypeInferencer, "infer_module", checked)
