"""Running the app on uvicorn: ``serve`` (the command, in the foreground: SIGINT and
SIGTERM stop taking connections, let the requests in flight finish and exit 0) and
``BackgroundServer`` (a server on a thread of this process, for tests, benchmarks and
notebooks)."""

from __future__ import annotations

import logging
import signal
import socket
import sys
import threading
import time

import uvicorn

from .app import DEFAULT_MAX_BODY, create_app
from .errors import ServeError


def configure_logging(level: int = logging.INFO) -> None:
    """The server's log and its JSON access log on stderr, one line per record."""
    for name, fmt in (("relayir.serve", "%(asctime)s %(levelname)s %(message)s"),
                      ("relayir.serve.access", "%(message)s")):
        logger = logging.getLogger(name)
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(logging.Formatter(fmt))
        logger.handlers[:] = [h]
        logger.setLevel(level)
        logger.propagate = False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (``port`` 0: a free one), made before the server starts so
    that its address is known at once."""
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say TCP,
    # and without it a response's headers and body meet Nagle + delayed ACK (40 ms each)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET,
                         socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port}: {exc}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _config(app) -> uvicorn.Config:
    # uvicorn's own access log is off: access_log.py writes a structured one
    return uvicorn.Config(app, access_log=False, log_level="warning", lifespan="on",
                          timeout_graceful_shutdown=30, backlog=2048)


def serve(repo, host: str = "127.0.0.1", port: int = 8000, poll_seconds: float = 1.0,
          max_body: int = DEFAULT_MAX_BODY, access_log: bool = True) -> int:
    """Serve ``repo`` until SIGINT or SIGTERM; the exit status."""
    configure_logging()
    sock = bind(host, port)
    app = create_app(repo, poll_seconds, max_body, access_log)
    logging.getLogger("relayir.serve").info("serving %s on http://%s:%d", repo, host,
                                            sock.getsockname()[1])
    # uvicorn drains on SIGINT/SIGTERM, then raises the signal again for the handler
    # installed before it ran: a no-op here, so a drained shutdown exits 0
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: None)
    uvicorn.Server(_config(app)).run(sockets=[sock])
    return 0


class BackgroundServer:
    """``with BackgroundServer(repo) as s: ... s.url``: the server on a thread, on
    127.0.0.1 and a free port, started (models loaded) when the block begins."""

    def __init__(self, repo, host: str = "127.0.0.1", port: int = 0,
                 poll_seconds: float = 0.2, max_body: int = DEFAULT_MAX_BODY,
                 access_log: bool = False, start_timeout: float = 120.0,
                 fast_path: bool = True):
        self.app = create_app(repo, poll_seconds, max_body, access_log, fast_path)
        self.socket = bind(host, port)
        self.host, self.port = host, self.socket.getsockname()[1]
        self.url = f"http://{host}:{self.port}"
        self.server = uvicorn.Server(_config(self.app))
        self.start_timeout = start_timeout
        self._thread = threading.Thread(target=self.server.run,
                                        kwargs={"sockets": [self.socket]}, daemon=True)

    @property
    def manager(self):
        return self.app.state.manager

    def __enter__(self) -> BackgroundServer:
        self._thread.start()
        deadline = time.monotonic() + self.start_timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise ServeError(f"the server on {self.url} did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=60)
        self.socket.close()


__all__ = ["BackgroundServer", "bind", "configure_logging", "serve"]
