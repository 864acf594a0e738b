"""The HTTP/REST endpoints of the Open Inference Protocol (KServe v2) as a Starlette app.

Health (``/v2/health/live``, ``/v2/health/ready``), server metadata (``/v2``), model
metadata and readiness (``/v2/models/<m>[/versions/<v>][/ready]``), inference
(``.../infer``: JSON tensors and the binary tensor data extension), the repository
extension (``/v2/repository/index``, ``/v2/repository/models/<m>/load|unload``) and
``/metrics`` (Prometheus). Every error is ``{"error": message}`` with the status its
``ServeError`` carries (``errors.py``); any other ``relayir.Error`` (a kernel failing) is
a 500, and the server keeps serving. Inference itself is ``infer.py``'s, whose raw ASGI
door (``FastInfer``) sits in front of this app.
"""

from __future__ import annotations

import contextlib

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..version import __version__
from .access_log import AccessLog
from .errors import NotFound, ServeError
from .infer import FastInfer, Inference
from .manager import ModelManager
from .metrics import Metrics
from .protocol import HEADER, datatype
from .version import ModelVersion

DEFAULT_MAX_BODY = 64 << 20


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class Endpoints:
    """The handlers, over one ``ModelManager`` and its ``Metrics``."""

    def __init__(self, manager: ModelManager, metrics: Metrics, inference: Inference):
        self.manager = manager
        self.metrics = metrics
        self.inference = inference

    # ------------------------------------------------------------ health and metadata

    async def live(self, request: Request) -> Response:
        return JSONResponse({"live": True})

    async def ready(self, request: Request) -> Response:
        models = self.manager.models
        ready = bool(models) and all(e.current is not None for e in models.values())
        return JSONResponse({"ready": ready}, status_code=200 if ready else 503)

    async def server_metadata(self, request: Request) -> Response:
        return JSONResponse({"name": "relayir", "version": __version__,
                             "extensions": ["binary_tensor_data", "model_repository"]})

    async def model_metadata(self, request: Request) -> Response:
        version = self._version(request)
        tensors = [
            [{"name": s.name, "datatype": datatype(s.dtype), "shape": version.metadata_shape(s)}
             for s in specs] for specs in (version.inputs(), version.outputs())]
        return JSONResponse({"name": version.name, "versions": [str(version.number)],
                             "platform": f"relayir_{version.base.executor}",
                             "inputs": tensors[0], "outputs": tensors[1]})

    async def model_ready(self, request: Request) -> Response:
        name = request.path_params["model"]
        wanted = request.path_params.get("version")
        entry = self.manager.models.get(name)
        if entry is None:
            raise NotFound(f"unknown model {name!r}")
        states = {str(v): {"state": s, "reason": why} for v, (s, why) in entry.states().items()}
        current = entry.current
        if wanted is None:
            ready = current is not None
            number = str(current.number) if current else None
        else:
            ready = states.get(wanted, {}).get("state") == "READY"
            number = wanted
        return JSONResponse({"name": name, "version": number, "ready": ready,
                             "versions": states}, status_code=200 if ready else 503)

    def _version(self, request: Request) -> ModelVersion:
        return self.manager.get(request.path_params["model"],
                                request.path_params.get("version"))

    # ------------------------------------------------------------ inference

    async def infer(self, request: Request) -> Response:
        """The Starlette door to ``Inference.answer`` (``infer.py``; ``FastInfer`` is the
        other one)."""
        status, body, headers = await self.inference.answer(
            request.path_params["model"], request.path_params.get("version"),
            request.headers.get(HEADER), request.headers.get("content-length"),
            request.receive, request.scope.setdefault("state", {}))
        return Response(body, status_code=status, headers=headers)

    # ------------------------------------------------------------ repository extension

    async def repository_index(self, request: Request) -> Response:
        rows = []
        for name, entry in sorted(self.manager.models.items()):
            for v, (state, why) in sorted(entry.states().items()):
                if v:  # 0: the model's config.json
                    rows.append({"name": name, "version": str(v), "state": state,
                                 "reason": why})
                else:
                    rows.append({"name": name, "state": state, "reason": why})
        for name in sorted(self.manager.unloaded):
            rows.append({"name": name, "state": "UNAVAILABLE", "reason": "unloaded"})
        return JSONResponse(rows)

    async def repository_load(self, request: Request) -> Response:
        await self.manager.load_model(request.path_params["model"])
        return JSONResponse({})

    async def repository_unload(self, request: Request) -> Response:
        await self.manager.unload_model(request.path_params["model"])
        return JSONResponse({})

    async def metrics_text(self, request: Request) -> Response:
        return Response(self.metrics.exposition(),
                        media_type="text/plain; version=0.0.4; charset=utf-8")


def create_app(repo, poll_seconds: float = 1.0, max_body: int = DEFAULT_MAX_BODY,
               access_log: bool = True, fast_path: bool = True, models=None):
    """The ASGI app serving the model repository ``repo`` (see the module docstring);
    ``app.state.manager`` is its ``ModelManager``. ``fast_path``: infer requests skip
    Starlette (``infer.FastInfer``); False sends them through its router, as the tests
    that compare the two do. ``models``: serve only these models of the repository."""
    metrics = Metrics()
    manager = ModelManager(repo, metrics, poll_seconds,
                           None if models is None else frozenset(models))
    inference = Inference(manager, metrics, max_body)
    ep = Endpoints(manager, metrics, inference)
    model = "/v2/models/{model}"
    versioned = "/v2/models/{model}/versions/{version}"
    # inference first: Starlette tries the routes in order, and infer is the hot one
    # (FastInfer, in front, takes POSTs there before Starlette sees them)
    routes = [Route(prefix + "/infer", ep.infer, methods=["POST"])
              for prefix in (model, versioned)]
    routes += [
        Route("/v2/health/live", ep.live),
        Route("/v2/health/ready", ep.ready),
        Route("/v2", ep.server_metadata),
        Route("/metrics", ep.metrics_text),
        Route("/v2/repository/index", ep.repository_index, methods=["POST", "GET"]),
        Route("/v2/repository/models/{model}/load", ep.repository_load, methods=["POST"]),
        Route("/v2/repository/models/{model}/unload", ep.repository_unload, methods=["POST"]),
    ]
    for prefix in (model, versioned):
        routes += [Route(prefix, ep.model_metadata), Route(prefix + "/ready", ep.model_ready)]

    @contextlib.asynccontextmanager
    async def lifespan(app):
        await manager.start()
        try:
            yield
        finally:
            await manager.stop()

    async def serve_error(request: Request, exc: ServeError) -> Response:
        return error(exc.status, str(exc))

    async def http_error(request: Request, exc: HTTPException) -> Response:
        return error(exc.status_code, f"{request.method} {request.url.path}: {exc.detail}")

    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={ServeError: serve_error, HTTPException: http_error})
    app.state.manager = manager
    app.state.metrics = metrics
    if fast_path:
        app = FastInfer(app, inference)
    return AccessLog(app) if access_log else app


__all__ = ["DEFAULT_MAX_BODY", "create_app"]
