"""The structured access log: one JSON object per HTTP request on the logger
``relayir.serve.access`` (time, client, method, path, status, milliseconds, bytes in
and out, and for inference the model and the version that answered)."""

from __future__ import annotations

import json
import logging
import time

log = logging.getLogger("relayir.serve.access")


class AccessLog:
    """ASGI middleware around the app; ``state`` is the app's."""

    def __init__(self, app):
        self.app = app
        self.state = app.state

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not log.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        seen = {"status": 500, "out": 0, "in": 0}

        async def counting_receive():
            message = await receive()
            seen["in"] += len(message.get("body", b""))
            return message

        async def counting_send(message):
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
            elif message["type"] == "http.response.body":
                seen["out"] += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, counting_receive, counting_send)
        finally:
            record = {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                      "client": (scope.get("client") or ("", 0))[0],
                      "method": scope["method"], "path": scope["path"],
                      "status": seen["status"],
                      "ms": round((time.perf_counter() - start) * 1e3, 3),
                      "bytes_in": seen["in"], "bytes_out": seen["out"]}
            parts = scope["path"].split("/")
            if len(parts) > 3 and parts[1:3] == ["v2", "models"]:
                record["model"] = parts[3]
                version = (scope.get("state") or {}).get("version")
                if version is not None:
                    record["version"] = version
            log.info(json.dumps(record))


__all__ = ["AccessLog"]
