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
model, and ``/metrics`` for every replica of every model: each replica posts its
figures to one ``relayir-metrics`` deployment when they change (a few milliseconds
after a request), which answers them merged (``metrics_merge.py``: counts summed over
replicas). The repository must be readable at the same path on
every node; a model added to it later needs the application deployed again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import uuid
from pathlib import Path

from ray import serve
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .app import DEFAULT_MAX_BODY, create_app
from .asgi_call import InProcessApp
from .metrics_merge import merged_exposition
from .repository import model_names

_MODEL_PATH = re.compile(r"/v2/(?:repository/)?models/([^/]+)(?:/.*)?")


@serve.deployment(ray_actor_options={"num_cpus": 0})  # it only keeps texts: no core of its own
class MetricsBoard:
    """The latest metrics of every replica, answered merged for the ingress's /metrics."""

    def __init__(self):
        self.texts: dict[str, str] = {}

    def put(self, replica: str, text: str) -> None:
        self.texts[replica] = text

    def merged(self) -> bytes:
        return merged_exposition(list(self.texts.values()))


# a replica posts its metrics at most this often, and at least this often when idle
POST_INTERVAL_S, IDLE_POST_S = 0.01, 5.0


@serve.deployment
class ModelReplica:
    """One model of the repository, served by the server's own app in this replica."""

    def __init__(self, repo: str, model: str, poll_seconds: float, max_body: int, board):
        self.app = InProcessApp(create_app(repo, poll_seconds, max_body, access_log=False,
                                           models=[model]))
        self.board, self.replica = board, f"{model}-{uuid.uuid4().hex[:12]}"
        self._changed: asyncio.Event | None = None
        self._poster: asyncio.Task | None = None

    def _start_posting(self) -> None:
        if self._poster is None:
            self._changed = asyncio.Event()
            self._poster = asyncio.get_running_loop().create_task(self._post_metrics())

    async def check_health(self) -> None:
        """Ray Serve's periodic probe: it also starts a replica no request reached yet
        posting its metrics (the versions it loaded)."""
        self._start_posting()

    async def request(self, method: str, path: str, query: bytes, headers: list,
                      body: bytes) -> tuple:
        self._start_posting()
        try:
            return await self.app.request(method, path, query, headers, body)
        finally:
            self._changed.set()

    async def _post_metrics(self) -> None:
        """Post this replica's exposition whenever it changed: after requests, and every
        few seconds (a hot swap changes the loaded-version gauge between requests)."""
        last = None
        while True:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), IDLE_POST_S)
            self._changed.clear()
            status, _, body = await self.app.request("GET", "/metrics", b"", [], b"")
            text = body.decode()
            if status == 200 and text != last:
                await self.board.put.remote(self.replica, text)
                last = text
            await asyncio.sleep(POST_INTERVAL_S)


@serve.deployment
class Router:
    """The ingress: requests to the model's deployment, server-wide answers from all."""

    def __init__(self, handles: dict, board):
        self.handles = handles  # model -> DeploymentHandle of its ModelReplica
        self.board = board

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
            return Response(await self.board.merged.remote(),
                            media_type="text/plain; version=0.0.4; charset=utf-8")
        return _response(*await self._ask(next(iter(self.handles)), request))  # /v2, 404s


def _response(status: int, headers: list, body: bytes) -> Response:
    response = Response(body, status_code=status)
    response.raw_headers = [(k, v) for k, v in headers]
    return response


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
    board = MetricsBoard.options(name=f"{name}-metrics").bind()
    handles = {m: ModelReplica.options(name=f"{name}-{m}", num_replicas=counts.get(m, 1))
               .bind(repo, m, poll_seconds, max_body, board) for m in models}
    return Router.options(name=name).bind(handles, board)


def serve_repository(repo: str | Path, host: str = "127.0.0.1", port: int = 8000,
                     num_replicas: int | dict[str, int] = 1, poll_seconds: float = 1.0,
                     max_body: int = DEFAULT_MAX_BODY, blocking: bool = False):
    """Start Ray Serve's proxy on ``host:port`` and run the repository's application at
    ``/``; returns its handle (``blocking``: serve until interrupted)."""
    serve.start(http_options={"host": host, "port": port})
    return serve.run(build_app(repo, num_replicas, poll_seconds, max_body), name="relayir",
                     route_prefix="/", blocking=blocking)


__all__ = ["MetricsBoard", "ModelReplica", "Router", "build_app", "serve_repository"]
