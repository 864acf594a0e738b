"""Calling the server's ASGI app in this process, without a socket: how a Ray Serve
replica (``ray.py``) answers a request its router hands it. ``InProcessApp(app)`` runs
the app's lifespan (models load) on first use; ``await it.request(method, path, query,
headers, body)`` returns ``(status, headers, body)``."""

from __future__ import annotations

import asyncio


class InProcessApp:
    def __init__(self, app):
        self.app = app
        self._started: asyncio.Future | None = None
        self._stop: asyncio.Event | None = None
        self._lifespan: asyncio.Task | None = None

    async def start(self) -> None:
        """Run the lifespan's startup (once); an app that fails to start raises here."""
        if self._started is None:
            loop = asyncio.get_running_loop()
            self._started, self._stop = loop.create_future(), asyncio.Event()
            self._lifespan = loop.create_task(self._run_lifespan())
        await asyncio.shield(self._started)

    async def _run_lifespan(self) -> None:
        events = iter([{"type": "lifespan.startup"}])

        async def receive():
            for event in events:
                return event
            await self._stop.wait()
            return {"type": "lifespan.shutdown"}

        async def send(message):
            kind = message["type"]
            if kind == "lifespan.startup.complete" and not self._started.done():
                self._started.set_result(None)
            elif kind == "lifespan.startup.failed" and not self._started.done():
                self._started.set_exception(RuntimeError(message.get("message", "")))

        scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
        try:
            await self.app(scope, receive, send)
        except Exception as exc:  # noqa: BLE001  (reported to whoever awaits start)
            if not self._started.done():
                self._started.set_exception(exc)

    async def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
            await self._lifespan

    async def request(self, method: str, path: str, query: bytes,
                      headers: list[tuple[bytes, bytes]], body: bytes
                      ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        await self.start()
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
                 "root_path": "", "query_string": query, "headers": headers,
                 "client": ("127.0.0.1", 0), "server": ("127.0.0.1", 0), "state": {}}
        sent = False
        status, out_headers, chunks = 500, [], []

        async def receive():
            nonlocal sent
            if sent:  # the body went in one message: nothing more will come
                await asyncio.Event().wait()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message):
            nonlocal status, out_headers
            if message["type"] == "http.response.start":
                status, out_headers = message["status"], list(message.get("headers", ()))
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, send)
        return status, out_headers, b"".join(chunks)


__all__ = ["InProcessApp"]
