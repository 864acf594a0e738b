"""The Optimisers view's data: 2-D loss surfaces whose gradient is
``relayir.transform.gradient`` of the surface written in Relay, built once, and the
paths SGD, Momentum and AdaGrad take on them for a range of learning rates.

Every optimiser and learning rate is one point of a batch: the surface is a function of
two vectors ``x, y`` (one entry per point) returning the value at each point, and its
gradient (of the sum, Relay's convention) is each point's own gradient, so each step of
all the paths is one run of the compiled gradient. The contour plot's grid is one run
of the compiled surface on all grid points. A path that leaves the plot far behind
(``|p| > ESCAPED``) or turns non-finite stops there: the report shows it diverged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..backend import build
from ..ir.expr import Expr, Function, const, var
from ..ir.module import IRModule
from ..runtime.graph_executor import GraphModule
from ..transform import PassContext, gradient

OPTIMIZERS = ("SGD", "Momentum", "AdaGrad")
MOMENTUM = 0.9
ADAGRAD_EPS = 1e-8
STEPS = 150
GRID = 96  # points per side of the contour grid
ESCAPED = 1e3


@dataclass(frozen=True)
class Surface:
    name: str
    formula: str
    value: Callable[[Expr, Expr], Expr]  # the surface in Relay, on vectors x, y
    bounds: tuple[float, float, float, float]  # x0, x1, y0, y1
    start: tuple[float, float]
    minimum: tuple[float, float]
    lr_range: dict[str, tuple[float, float]]  # per optimiser: smallest, largest


def _rosenbrock(x: Expr, y: Expr) -> Expr:
    a = const(1.0) - x
    b = y - x * x
    return a * a + const(100.0) * b * b


def _quadratic(x: Expr, y: Expr) -> Expr:
    return const(0.5) * x * x + const(10.0) * y * y


SURFACES = (
    Surface("Rosenbrock", "(1 - x)² + 100 (y - x²)²", _rosenbrock, (-2.0, 2.0, -1.0, 3.0),
            (-1.5, 2.2), (1.0, 1.0),
            {"SGD": (1e-4, 2e-3), "Momentum": (2e-5, 1.5e-3), "AdaGrad": (0.05, 3.0)}),
    Surface("Quadratic", "x² / 2 + 10 y²", _quadratic, (-3.0, 3.0, -2.0, 2.0),
            (-2.7, 1.6), (0.0, 0.0),
            {"SGD": (0.005, 0.11), "Momentum": (0.002, 0.1), "AdaGrad": (0.05, 2.0)}),
)


def learning_rates(lo: float, hi: float, n: int) -> list[float]:
    return [float(f"{v:.3g}") for v in np.geomspace(lo, hi, n)]


def _vectors(n: int) -> tuple:
    return var("x", shape=(n,)), var("y", shape=(n,))


def surface_function(surface: Surface, n: int) -> Function:
    """``fn(x, y) -> value`` at ``n`` points."""
    x, y = _vectors(n)
    return Function([x, y], surface.value(x, y))


def _compiled(fn: Function, target, opt_level: int) -> GraphModule:
    with PassContext(opt_level=opt_level):
        return GraphModule(build(IRModule.from_expr(fn), target=target))


def _paths(grad: GraphModule, surface: Surface, lrs: dict[str, list[float]]) -> dict:
    """Each optimiser's path at each of its learning rates: ``STEPS + 1`` points (fewer
    when it diverged)."""
    rates = np.array([lr for name in OPTIMIZERS for lr in lrs[name]], "float64")
    kind = np.repeat(np.arange(len(OPTIMIZERS)), [len(lrs[n]) for n in OPTIMIZERS])
    pos = np.tile(np.array(surface.start, "float64"), (len(rates), 1))
    velocity = np.zeros_like(pos)
    squares = np.zeros_like(pos)
    alive = np.ones(len(rates), bool)
    points = [pos.copy()]
    for _ in range(STEPS):
        grad.run(x=pos[:, 0].astype("float32"), y=pos[:, 1].astype("float32"))
        g = _grads(grad).astype("float64")
        velocity = MOMENTUM * velocity + g
        squares += g * g
        step = np.where((kind == 0)[:, None], g,
                        np.where((kind == 1)[:, None], velocity,
                                 g / (np.sqrt(squares) + ADAGRAD_EPS)))
        new = pos - rates[:, None] * step
        ok = np.all(np.isfinite(new), axis=1) & (np.max(np.abs(new), axis=1) < ESCAPED)
        alive &= ok
        pos = np.where(alive[:, None], new, pos)
        points.append(np.where(alive[:, None], pos, np.nan))
    track = np.stack(points, axis=1)  # point, step, xy
    out: dict[str, list] = {}
    row = 0
    for name in OPTIMIZERS:
        out[name] = []
        for _ in lrs[name]:
            path = track[row]
            finite = np.all(np.isfinite(path), axis=1)
            end = int(np.argmin(finite)) if not finite.all() else len(path)
            out[name].append(np.round(path[:end], 4).tolist())
            row += 1
    return out


def _grads(grad: GraphModule) -> np.ndarray:
    """``(points, 2)``: outputs 1 and 2 of the gradient function (dx, dy)."""
    return np.stack([grad.get_output(1), grad.get_output(2)], axis=1)


def surface_section(surface: Surface, target, opt_level: int, n_lrs: int) -> dict:
    lrs = {name: learning_rates(*surface.lr_range[name], n_lrs) for name in OPTIMIZERS}
    points = sum(len(v) for v in lrs.values())
    grad_fn = gradient(surface_function(surface, points))
    grad = _compiled(grad_fn, target, opt_level)
    x0, x1, y0, y1 = surface.bounds
    gx, gy = np.meshgrid(np.linspace(x0, x1, GRID), np.linspace(y0, y1, GRID))
    grid = _compiled(surface_function(surface, GRID * GRID), target, opt_level)
    grid.run(x=gx.reshape(-1).astype("float32"), y=gy.reshape(-1).astype("float32"))
    values = grid.get_output(0)
    return {"name": surface.name, "formula": surface.formula, "bounds": list(surface.bounds),
            "start": list(surface.start), "minimum": list(surface.minimum),
            "grid": {"n": GRID, "values": [float(f"{v:.5g}") for v in values.tolist()]},
            "lrs": lrs, "paths": _paths(grad, surface, lrs),
            "gradient_text": IRModule.from_expr(grad_fn).astext(show_meta_data=False)}


def optimizers_section(target, opt_level: int, n_lrs: int = 16) -> dict:
    return {"optimizers": list(OPTIMIZERS), "steps": STEPS, "momentum": MOMENTUM,
            "surfaces": [surface_section(s, target, opt_level, n_lrs) for s in SURFACES]}


__all__ = ["OPTIMIZERS", "SURFACES", "Surface", "optimizers_section", "surface_function"]
