"""``POST /v2/models/<m>[/versions/<v>]/infer``: one implementation behind two doors.

``Inference.answer`` reads the body, decodes it, runs the model (through its batcher,
if it has one), encodes the outputs and counts the request in the metrics; it returns
the status, the body and the headers, errors included (``{"error": message}``), so
both doors send the same bytes:

- ``FastInfer``: a raw ASGI app in front of the Starlette app. It matches the infer
  path itself and talks ASGI messages directly; everything else goes on to Starlette.
  Starlette's routing, ``Request`` and ``Response`` objects and its middleware stack
  cost more per request than a small model runs (see ``benchmarks/serve_load.py``'s
  ``overhead`` phase), so the hot route skips them.
- the Starlette route (``app.py``), kept for ``create_app(fast_path=False)``: the
  reference the fast path is tested against.
"""

from __future__ import annotations

import json
import re
import time

from starlette.requests import ClientDisconnect

from ..errors import Error
from .errors import BadRequest, ServeError, TooLarge
from .manager import ModelManager
from .metrics import Metrics
from .protocol import HEADER, decode_request, encode_response
from .version import ModelVersion

INFER_PATH = re.compile(r"/v2/models/([^/]+)(?:/versions/([^/]+))?/infer")
_HEADER = HEADER.encode()

Answer = tuple[int, bytes, dict[str, str]]  # status, body, headers (content-length aside)


def error_answer(status: int, message: str) -> Answer:
    """The protocol's error body, as Starlette's ``JSONResponse`` writes it."""
    body = json.dumps({"error": message}, ensure_ascii=False, allow_nan=False,
                      separators=(",", ":")).encode()
    return status, body, {"content-type": "application/json"}


class Inference:
    """See the module docstring: the infer endpoint over one ``ModelManager``."""

    def __init__(self, manager: ModelManager, metrics: Metrics, max_body: int):
        self.manager = manager
        self.metrics = metrics
        self.max_body = max_body

    async def answer(self, name: str, wanted: str | None, header_length: str | None,
                     declared: str | None, receive, state: dict) -> Answer:
        """The answer to one infer request for model ``name`` (version ``wanted``, None:
        the current one); ``declared`` is its Content-Length, ``receive`` its ASGI
        receive, ``state`` its ASGI scope's state (the version that answers goes
        there, for the access log)."""
        start = time.perf_counter()
        code = 500
        try:
            body = await self.read_body(receive, declared)
            req = decode_request(body, header_length)
            version = self.manager.get(name, wanted)
            version.enter()  # before any await: a swap now waits for this request
            try:
                state["version"] = version.number
                outputs = await self._run(version, req.inputs)
            finally:
                version.leave()
            payload, headers = encode_response(name, version.label, req,
                                               _select(version, req.requested, outputs))
            code = 200
            return 200, payload, headers
        except ServeError as exc:
            code = exc.status
            return error_answer(exc.status, str(exc))
        except Error as exc:  # a kernel or executor failure: the request fails, not the server
            return error_answer(500, f"{type(exc).__name__}: {exc}")
        finally:
            self.metrics.request_done(name, code, time.perf_counter() - start)

    async def read_body(self, receive, declared: str | None) -> bytes:
        """The whole body, refused (413) as soon as it is over ``max_body``."""
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            raise TooLarge(f"the request body is {declared} bytes; the limit is "
                           f"{self.max_body} (relayir serve --max-body-bytes)")
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # http.disconnect
                raise ClientDisconnect()
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                raise TooLarge(f"the request body is over the limit of {self.max_body} bytes "
                               f"(relayir serve --max-body-bytes)")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def _run(self, version: ModelVersion, inputs: dict) -> list:
        arrays, rows = version.check(inputs)
        batcher = self.manager.batcher(version)
        if batcher is None:
            return await version.execute(arrays, rows)
        result = await batcher.submit(arrays, rows)
        self.metrics.queued(version.name, result.queue_seconds)
        return result.outputs


def _select(version: ModelVersion, requested: list[str] | None, outputs: list) -> dict:
    specs = version.output_names
    names = [specs[i] if i < len(specs) else f"output{i}" for i in range(len(outputs))]
    by_name = dict(zip(names, outputs))
    if requested is None:
        return by_name
    unknown = [n for n in requested if n not in by_name]
    if unknown:
        raise BadRequest(f"model {version.name!r} has no output named "
                         f"{', '.join(map(repr, unknown))}; its outputs are {', '.join(names)}")
    return {n: by_name[n] for n in requested}


class FastInfer:
    """ASGI: infer requests straight to ``Inference``, the rest to ``app`` (Starlette)."""

    def __init__(self, app, inference: Inference):
        self.app = app
        self.state = app.state
        self.inference = inference

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            path = scope["path"]
            root = scope.get("root_path", "")
            if root and path.startswith(root):  # as Starlette's routing sees the path
                path = path[len(root):]
            match = INFER_PATH.fullmatch(path)
            if match is not None:
                await self._infer(match, scope, receive, send)
                return
        await self.app(scope, receive, send)

    async def _infer(self, match, scope, receive, send) -> None:
        header_length = declared = None
        for key, value in scope["headers"]:
            if key == b"content-length":
                declared = value.decode("latin-1")
            elif key == _HEADER:
                header_length = value.decode("latin-1")
        state = scope.get("state")
        if state is None:
            state = scope["state"] = {}
        try:
            status, body, headers = await self.inference.answer(
                match[1], match[2], header_length, declared, receive, state)
        except ClientDisconnect:
            return  # nobody to answer
        raw = [(b"content-length", str(len(body)).encode())]
        raw += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
        await send({"type": "http.response.start", "status": status, "headers": raw})
        await send({"type": "http.response.body", "body": body})


__all__ = ["INFER_PATH", "FastInfer", "Inference", "error_answer"]
