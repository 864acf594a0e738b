"""``tvm.ir.diagnostics``: the renderer hooks only.

TVM collects type and parse errors in a diagnostic context and renders them through a
replaceable renderer. relayir raises each error at once as a ``relayir.Error`` whose
message names the place (``tvm.error.DiagnosticError`` catches it), so there is nothing
to render: ``override_renderer`` keeps the function given and relayir never calls it.
"""

from __future__ import annotations

from ..error import not_in_relayir


class DiagnosticRenderer:
    """The default renderer: relayir's errors carry their message, nothing to render."""

    def __init__(self, render=None):
        self._render = render

    def render(self, ctx) -> None:
        if self._render is not None:
            self._render(ctx)


_renderer = [DiagnosticRenderer()]


def get_renderer() -> DiagnosticRenderer:
    return _renderer[0]


def override_renderer(render) -> None:
    """Replace the renderer (``None``: the default). relayir never renders, so the
    function is kept and not called."""
    _renderer[0] = DiagnosticRenderer(render)


DiagnosticContext = not_in_relayir("tvm.ir.diagnostics.DiagnosticContext",
                                   "relayir raises each error at once as a relayir.Error")

__all__ = ["DiagnosticContext", "DiagnosticRenderer", "get_renderer", "override_renderer"]
