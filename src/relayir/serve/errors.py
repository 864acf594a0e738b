"""The server's errors: each carries the HTTP status the protocol answers it with, and
its message becomes the body ``{"error": message}``."""

from __future__ import annotations

from ..errors import Error


class ServeError(Error):
    """A request the server cannot answer as asked."""

    status = 500


class BadRequest(ServeError):
    """Malformed JSON or binary data, a wrong input name, dtype or shape."""

    status = 400


class NotFound(ServeError):
    """An unknown model or version."""

    status = 404


class TooLarge(ServeError):
    """A request body over the server's limit."""

    status = 413


class Unavailable(ServeError):
    """A model with no version ready to serve (loading, or every load failed)."""

    status = 503


class RepositoryError(ServeError):
    """A repository, model directory or config.json that cannot be read."""

    status = 400


__all__ = ["BadRequest", "NotFound", "RepositoryError", "ServeError", "TooLarge", "Unavailable"]
