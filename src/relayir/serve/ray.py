"""The model repository as a Ray Serve application: the same endpoints, protocol, hot
swap and batching as ``relayir serve``, in ``num_replicas`` Ray actors behind Ray
Serve's HTTP proxy (which spreads requests over them, on one machine or a cluster).

    from relayir.serve.ray import serve_repository
    serve_repository("repo", port=8000, num_replicas=2)   # on ray.init()'s cluster

Each replica runs the Starlette app of ``app.py`` (``serve.ingress``): it loads every
model of the repository, which must be readable at the same path on every node.
"""

from __future__ import annotations

from pathlib import Path

from ray import serve

from .app import DEFAULT_MAX_BODY, create_app


def build_app(repo: str | Path, num_replicas: int = 1, poll_seconds: float = 1.0,
              max_body: int = DEFAULT_MAX_BODY, name: str = "relayir"):
    """The bound Ray Serve application (``serve.run(build_app(repo))``)."""
    repo = str(Path(repo).resolve())

    def asgi_app():  # built on each replica, so that each loads the models itself
        return create_app(repo, poll_seconds, max_body, access_log=False)

    deployment = serve.deployment(name=name, num_replicas=num_replicas)(
        serve.ingress(asgi_app)())
    return deployment.bind()


def serve_repository(repo: str | Path, host: str = "127.0.0.1", port: int = 8000,
                     num_replicas: int = 1, poll_seconds: float = 1.0,
                     max_body: int = DEFAULT_MAX_BODY, blocking: bool = False):
    """Start Ray Serve's proxy on ``host:port`` and run the repository's application at
    ``/``; returns its handle (``blocking``: serve until interrupted)."""
    serve.start(http_options={"host": host, "port": port})
    return serve.run(build_app(repo, num_replicas, poll_seconds, max_body), name="relayir",
                     route_prefix="/", blocking=blocking)


__all__ = ["build_app", "serve_repository"]
