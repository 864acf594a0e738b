"""The model repository as a Ray Serve application: the same endpoints, protocol, hot
swap and batching as ``relayir serve``, with replicas per model behind Ray Serve's HTTP
proxy (which spreads requests over them, on one machine or a cluster).

    from relayir.serve.ray import serve_repository
    serve_repository("repo", port=8000, num_replicas={"resnet": 4, "mlp": 1})

Each model of the repository is a deployment of its own (``relayir-<model>``,
``num_replicas`` of it: one number for every model, or a count per model, default 1);
each replica runs the server's app (``app.py``) over that model alone, in process
(``asgi_call.py``), so versions hot-swap inside it as in ``relayir serve``. An ingress
deployment (``relayir``) routes ``/v2/models/<m>/...`` and the repository extension's
``.../models/<m>/load|unload`` to the model's deployment, and answers the server-wide
endpoints from all of them: ready when every model is, the repository index of every
model, ``/metrics`` merged (each model's figures from one of its replicas: Ray Serve's
own metrics count every replica). The repository must be readable at the same path on
every node; a model added to it later needs the application deployed again.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from ray import serve
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .app import DEFAULT_MAX_BODY, create_app
from .asgi_call import InProcessApp
from .repository import model_names

_MODEL_PATH = re.compile(r"/v2/(?:repository/)?models/([^/]+)(?:/.*)?")


@serve.deployment
class ModelReplica:
    """One model of the repository, served by the server's own app in this replica."""

    def __init__(self, repo: str, model: str, poll_seconds: float, max_body: int):
        self.app = InProcessApp(create_app(repo, poll_seconds, max_body, access_log=False,
                                           models=[model]))

    async def request(self, method: str, path: str, query: bytes, headers: list,
                      body: bytes) -> tuple:
        return await self.app.request(method, path, query, headers, body)


@serve.deployment
class Router:
    """The ingress: requests to the model's deployment, server-wide answers from all."""

    def __init__(self, handles: dict):
        self.handles = handles  # model -> DeploymentHandle of its ModelReplica

    async def _ask(self, model: str, request: Request, body: bytes | None = None) -> tuple:
        headers = [(k.lower(), v) for k, v in request.headers.raw]
        data = await request.body() if body is None else body
        return await self.handles[model].request.remote(
            request.method, request.url.path, request.url.query.encode(), headers, data)

    async def _ask_all(self, request: Request) -> list[tuple]:
        return await asyncio.gather(*(self._ask(m, request, b"") for m in self.handles))

    async def __call__(self, request: Request) -> Response:
        path = request.url.path
        match = _MODEL_PATH.fullmatch(path)
        if match is not None:
            if match[1] not in self.handles:
                return JSONResponse({"error": f"unknown model {match[1]!r}; the repository "
                                              f"serves {', '.join(sorted(self.handles))}"},
                                    status_code=404)
            return _response(*await self._ask(match[1], request))
        if path == "/v2/health/live":
            return JSONResponse({"live": True})
        if path == "/v2/health/ready":
            ready = all(status == 200 for status, _, _ in await self._ask_all(request))
            return JSONResponse({"ready": ready}, status_code=200 if ready else 503)
        if path == "/v2/repository/index":
            rows = [row for status, _, body in await self._ask_all(request) if status == 200
                    for row in json.loads(body)]
            return JSONResponse(sorted(rows, key=lambda r: (r["name"], r.get("version", ""))))
        if path == "/metrics":
            texts = [body.decode() for status, _, body in await self._ask_all(request)
                     if status == 200]
            return Response(_merged_metrics(texts),
                            media_type="text/plain; version=0.0.4; charset=utf-8")
        return _response(*await self._ask(next(iter(self.handles)), request))  # /v2, 404s


def _response(status: int, headers: list, body: bytes) -> Response:
    response = Response(body, status_code=status)
    response.raw_headers = [(k, v) for k, v in headers]
    return response


class _Families:
    """A collector of metric families parsed from several expositions (one per model:
    the label sets do not overlap), for ``generate_latest``."""

    def __init__(self, texts: list[str]):
        self.texts = texts

    def collect(self):
        families: dict = {}
        for text in self.texts:
            for family in text_string_to_metric_families(text):
                if family.name in families:
                    families[family.name].samples.extend(family.samples)
                else:
                    families[family.name] = family
        return list(families.values())


def _merged_metrics(texts: list[str]) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(texts))
    return generate_latest(registry)


def build_app(repo: str | Path, num_replicas: int | dict[str, int] = 1,
              poll_seconds: float = 1.0, max_body: int = DEFAULT_MAX_BODY,
              name: str = "relayir"):
    """The bound Ray Serve application (``serve.run(build_app(repo))``): a deployment
    per model (``num_replicas``: for every model, or per model, default 1) and the
    ingress ``name``."""
    repo = str(Path(repo).resolve())
    models = model_names(Path(repo))
    counts = num_replicas if isinstance(num_replicas, dict) else dict.fromkeys(
        models, num_replicas)
    unknown = set(counts) - set(models)
    if unknown:
        raise ValueError(f"num_replicas names models the repository lacks: "
                         f"{', '.join(sorted(unknown))}")
    handles = {m: ModelReplica.options(name=f"{name}-{m}", num_replicas=counts.get(m, 1))
               .bind(repo, m, poll_seconds, max_body) for m in models}
    return Router.options(name=name).bind(handles)


def serve_repository(repo: str | Path, host: str = "127.0.0.1", port: int = 8000,
                     num_replicas: int | dict[str, int] = 1, poll_seconds: float = 1.0,
                     max_body: int = DEFAULT_MAX_BODY, blocking: bool = False):
    """Start Ray Serve's proxy on ``host:port`` and run the repository's application at
    ``/``; returns its handle (``blocking``: serve until interrupted)."""
    serve.start(http_options={"host": host, "port": port})
    return serve.run(build_app(repo, num_replicas, poll_seconds, max_body), name="relayir",
                     route_prefix="/", blocking=blocking)


__all__ = ["ModelReplica", "Router", "build_app", "serve_repository"]
