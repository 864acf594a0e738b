"""``relayir serve``: compiled models behind the Open Inference Protocol (KServe v2).

A model repository (``repository.py``: ``REPO/<model>/<version>/model.relayir`` and an
optional ``config.json``) is served over HTTP/REST by a Starlette app (``app.py``) on
uvicorn (``server.py``), inference through a raw ASGI fast path (``infer.py``): JSON and
binary tensors (``protocol.py``), hot swap of new
versions (``manager.py``), dynamic batching (``batcher.py``) on worker threads
(``version.py``), Prometheus metrics and a structured access log. ``ray.py`` serves the
same repository as a Ray Serve application.

Needs the ``serve`` extra (``pip install "relayir[serve]"``: starlette, uvicorn,
prometheus_client); ``import relayir`` does not import this package.
"""

from __future__ import annotations

from .app import create_app
from .errors import BadRequest, NotFound, RepositoryError, ServeError, TooLarge, Unavailable
from .repository import ModelConfig

__all__ = ["BadRequest", "ModelConfig", "NotFound", "RepositoryError", "ServeError", "TooLarge",
           "Unavailable", "create_app"]
