"""The Open Inference Protocol (KServe v2) tensors over HTTP/REST: decoding an infer
request (JSON tensors, and the binary tensor data extension) and encoding its response.

No web framework here: bytes and headers in, arrays out, so the codec is tested alone
and shared by the Starlette app and the Ray Serve deployment.

Binary extension: the header ``Inference-Header-Content-Length`` gives the length of the
JSON that opens the body; each input whose ``parameters.binary_data_size`` is set takes
that many bytes (row-major, little-endian) from what follows, in input order. Outputs
come back binary when the request asks (``parameters.binary_data_output``, or an
output's ``parameters.binary_data``), with the same header on the response.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field

import numpy as np

from .errors import BadRequest

HEADER = "inference-header-content-length"

DATATYPES = {
    "BOOL": "bool", "UINT8": "uint8", "UINT16": "uint16", "UINT32": "uint32",
    "UINT64": "uint64", "INT8": "int8", "INT16": "int16", "INT32": "int32", "INT64": "int64",
    "FP16": "float16", "FP32": "float32", "FP64": "float64",
}
DTYPES = {v: k for k, v in DATATYPES.items()}
# per request, looked up by the protocol's name or numpy's dtype object: ``dtype.name``
# and ``np.dtype(...).newbyteorder`` cost microseconds each
_WIRE = {k: np.dtype(v).newbyteorder("<") for k, v in DATATYPES.items()}  # as sent
_NATIVE = {k: np.dtype(v) for k, v in DATATYPES.items()}  # as computed on
_NAMES = {np.dtype(v): k for k, v in DATATYPES.items()}
_LITTLE = sys.byteorder == "little"


def datatype(dtype: str | np.dtype) -> str:
    """The protocol's name of a numpy dtype (``float32`` or ``np.dtype("float32")`` →
    ``FP32``)."""
    if isinstance(dtype, np.dtype):
        name = _NAMES.get(dtype)
        return name if name is not None else datatype(dtype.name)
    return DTYPES.get(dtype, dtype.upper())


@dataclass
class InferRequest:
    inputs: dict[str, np.ndarray]
    id: str | None = None
    binary_outputs: set[str] = field(default_factory=set)  # output names to send binary
    all_binary: bool = False
    requested: list[str] | None = None  # output names asked for, None: all


def decode_request(body: bytes, header_length: str | None) -> InferRequest:
    """An ``InferRequest`` from a request body; a ``BadRequest`` (400) names what is wrong."""
    if header_length is not None:
        try:
            n = int(header_length)
        except ValueError:
            raise BadRequest(f"{HEADER} is not an integer: {header_length!r}") from None
        if not 0 <= n <= len(body):
            raise BadRequest(f"{HEADER} is {n} but the body holds {len(body)} bytes")
        head, rest = body[:n], memoryview(body)[n:]
    else:
        head, rest = body, memoryview(b"")
    try:
        doc = json.loads(head)
    except ValueError as exc:
        raise BadRequest(f"malformed JSON in the request: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("inputs"), list):
        raise BadRequest("the request must be a JSON object with an \"inputs\" list")
    inputs, offset = {}, 0
    for i, t in enumerate(doc["inputs"]):
        array, used = _decode_tensor(i, t, rest[offset:])
        inputs[t["name"]] = array
        offset += used
    if offset != len(rest):
        raise BadRequest(f"the body holds {len(rest)} bytes of binary data after the JSON, "
                         f"the inputs take {offset}")
    params = doc.get("parameters") or {}
    outputs = doc.get("outputs")
    if outputs is not None and not (isinstance(outputs, list)
                                    and all(isinstance(o, dict) and "name" in o
                                            for o in outputs)):
        raise BadRequest("\"outputs\" must be a list of objects with a \"name\"")
    binary = {o["name"] for o in outputs or ()
              if (o.get("parameters") or {}).get("binary_data")}
    return InferRequest(inputs, doc.get("id"), binary, bool(params.get("binary_data_output")),
                        [o["name"] for o in outputs] if outputs is not None else None)


def _decode_tensor(i: int, t, rest: memoryview) -> tuple[np.ndarray, int]:
    if not isinstance(t, dict) or not isinstance(t.get("name"), str):
        raise BadRequest(f"input {i}: an object with a \"name\" expected")
    name = t["name"]
    shape, dt = t.get("shape"), t.get("datatype")
    if not (isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape)):
        raise BadRequest(f"input {name!r}: \"shape\" must be a list of non-negative ints, "
                         f"found {shape!r}")
    if dt not in DATATYPES:
        raise BadRequest(f"input {name!r}: datatype {dt!r} is not supported (one of "
                         f"{', '.join(DATATYPES)})")
    dtype = _WIRE[dt]
    count = math.prod(shape)
    size = (t.get("parameters") or {}).get("binary_data_size")
    if size is not None:
        if size != count * dtype.itemsize:
            raise BadRequest(f"input {name!r}: binary_data_size {size}, but shape {shape} of "
                             f"{dt} takes {count * dtype.itemsize} bytes")
        if size > len(rest):
            raise BadRequest(f"input {name!r}: binary_data_size {size}, but only {len(rest)} "
                             f"bytes of binary data remain in the body")
        array = np.frombuffer(rest[:size], dtype).reshape(shape)  # no copy: a view of the body
        return (array if _LITTLE else array.astype(_NATIVE[dt])), size
    data = t.get("data")
    if data is None:
        raise BadRequest(f"input {name!r} has neither \"data\" nor binary_data_size")
    try:
        array = np.asarray(data, dtype=DATATYPES[dt])
    except (TypeError, ValueError) as exc:
        raise BadRequest(f"input {name!r}: data is not {dt}: {exc}") from None
    if array.size != count:
        raise BadRequest(f"input {name!r}: shape {shape} takes {count} elements, data holds "
                         f"{array.size}")
    return array.reshape(shape), 0


def encode_response(model: str, version: str, request: InferRequest,
                    outputs: dict[str, np.ndarray]) -> tuple[bytes, dict[str, str]]:
    """The response body and its headers: JSON, plus the binary outputs after it."""
    tensors, chunks = [], []
    for name, array in outputs.items():
        entry = {"name": name, "datatype": datatype(array.dtype), "shape": list(array.shape)}
        if request.all_binary or name in request.binary_outputs:
            # tobytes writes row-major whatever the strides: the one copy of the output
            raw = (array if _LITTLE else array.astype(array.dtype.newbyteorder("<"))).tobytes()
            entry["parameters"] = {"binary_data_size": len(raw)}
            chunks.append(raw)
        else:
            entry["data"] = array.ravel().tolist()
        tensors.append(entry)
    doc = {"model_name": model, "model_version": version, "outputs": tensors}
    if request.id is not None:
        doc["id"] = request.id
    head = json.dumps(doc, separators=(",", ":")).encode()
    if not chunks:
        return head, {"content-type": "application/json"}
    return b"".join([head, *chunks]), {"content-type": "application/octet-stream",
                                       HEADER: str(len(head))}


__all__ = ["DATATYPES", "HEADER", "InferRequest", "datatype", "decode_request",
           "encode_response"]
