"""``relay.parse`` / ``relay.fromtext`` with Relay's signature: ``init_meta_table``
(``{"relay.Constant": [constants]}``) supplies what ``meta[relay.Constant][i]`` refers
to, written as the text's ``#[metadata]`` section that relayir's parser reads.

As Relay's parser does, the parsed module is type-checked with ``InferType`` (the
inferred types written in), so a program that does not type-check is an error here."""

from __future__ import annotations

import base64
import json

import numpy as np

from ...errors import Error
from ...ir.expr import Constant
from ...ir.module import IRModule
from ...ir.parser import parse as _parse
from .transform import InferType

METADATA = "#[metadata]"


def _entry(value) -> dict:
    data = value.data if isinstance(value, Constant) else np.asarray(value)
    little = np.ascontiguousarray(data).astype(data.dtype.newbyteorder("<"), copy=False)
    return {"dtype": data.dtype.name, "shape": list(data.shape),
            "data": base64.b64encode(little.tobytes()).decode()}


def parse(source: str, source_name: str = "from_string", init_module: IRModule | None = None,
          init_meta_table: dict | None = None) -> IRModule:
    """Parse Relay text into a module (``init_module``'s definitions are visible)."""
    if init_meta_table:
        unknown = sorted(set(init_meta_table) - {"relay.Constant"})
        if unknown:
            raise Error(f"relay.parse: init_meta_table has {', '.join(unknown)}; relayir's "
                        f"metadata holds relay.Constant only")
        if METADATA in source:
            raise Error("relay.parse: give the metadata either in the text or as "
                        "init_meta_table, not both")
        table = {"relay.Constant": [_entry(c) for c in init_meta_table["relay.Constant"]]}
        source = f"{source}\n{METADATA}\n{json.dumps(table)}\n"
    return InferType()(_parse(source, source_name, init_module))


fromtext = parse

__all__ = ["fromtext", "parse"]
