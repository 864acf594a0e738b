"""Graph-level tuning: each convolution's algorithm (direct, Winograd F(2×2), F(4×4),
F(6×6)), measured in the whole model.

A kernel task's schedule changes one kernel; a convolution's algorithm changes the
kernels themselves (a Winograd layer is a different primitive function with transformed
weights), so it is searched here, above the kernel tasks, as ``AlterOpLayout``'s
per-layer configs (``relay.AlterOpLayout.conv_algorithm`` / ``winograd_tile``, dicts by
workload key). Each candidate is measured as the whole model built with it, in
alternation with the best configuration so far (which starts as the cost rule's),
because
a layer alone misleads: its weights stay in the caches between runs, while a model's
stream from memory (alone, F(4×4) wins at resnet18's 14×14×256; in the model F(2×2)
does). Workloads are visited heaviest first; every candidate of a layer is measured
against the same reference, and the best one replaces the current choice when its
fastest time is below ``records.MIN_GAIN`` times the reference's (``best_configs``'
score, so a build under the records applies the same choice).

Records: one per candidate, ``task`` = the workload key, ``kind`` =
``"conv_algorithm"``, ``schedule`` = ``{"algorithm": ..., "tile": ...}``, ``costs`` =
the model's latencies with it, ``reference`` = the current choice's in the same rounds.
``apply_history_best`` hands the best ones to ``AlterOpLayout`` in every build.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from ..backend.build_module import bind_param_arrays, build
from ..backend.lowering import merged_config
from ..errors import Error
from ..ir.expr import Call, Function
from ..ir.functor import post_order
from ..ir.module import IRModule
from ..runtime.graph_executor import GraphModule
from ..transform.alter_op_layout import (
    ALGORITHM_KEY,
    WINOGRAD_TILE_KEY,
    WINOGRAD_TILES,
    ConvWorkload,
    choose_algorithm,
    conv_workload,
)
from ..transform.pass_infra import PassContext
from ..typing.infer import infer_module
from .records import MIN_GAIN, Record, append_records
from .task import host_cpu, random_inputs, target_name

KIND = "conv_algorithm"


def conv_workloads(mod: IRModule) -> list[tuple[ConvWorkload, int]]:
    """``(workload, count)`` of each distinct ``nn.conv2d`` of ``@main``, in the order
    the model first uses them."""
    mod = infer_module(mod.copy())
    counts: dict = {}
    for node in post_order(mod["main"]):
        if type(node) is Call and getattr(node.op, "name", "") == "nn.conv2d":
            wl = conv_workload(node)
            if wl is not None:
                counts[wl] = counts.get(wl, 0) + 1
    return list(counts.items())


def choices(wl: ConvWorkload) -> list[dict]:
    """The algorithms ``wl`` can run: direct, and Winograd's tiles where it applies."""
    out = [{"algorithm": "direct"}]
    if wl.winograd_applies:
        out += [{"algorithm": "winograd", "tile": m} for m in WINOGRAD_TILES]
    return out


def _rule(wl: ConvWorkload) -> dict:
    algorithm, tile = choose_algorithm(wl)
    return {"algorithm": algorithm, **({"tile": tile} if tile else {})}


def pass_config(chosen: dict[str, dict]) -> dict:
    """``AlterOpLayout``'s configs for ``{workload key: choice}``."""
    algorithms = {k: c["algorithm"] for k, c in chosen.items()}
    tiles = {k: c["tile"] for k, c in chosen.items() if c.get("tile")}
    return {**({ALGORITHM_KEY: algorithms} if algorithms else {}),
            **({WINOGRAD_TILE_KEY: tiles} if tiles else {})}


def _latency(run: Callable, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def tune_conv_algorithms(mod: IRModule | Function, params: dict | None = None,
                         target="cpu", *, records=None, rounds: int = 5, runs: int = 10,
                         inputs: dict | None = None,
                         log: Callable[[str], None] | None = None) -> dict[str, dict]:
    """Measure every algorithm of every convolution of ``mod`` in the whole model (see
    the module doc); returns ``{workload key: choice}`` for the layers whose best choice
    differs from the cost rule's. ``records``: the JSON-lines file the measurements are
    appended to; ``inputs``: the model's inputs (random ones by default)."""
    if isinstance(mod, Function):
        mod = IRModule.from_expr(mod)
    if params:
        mod = bind_param_arrays(mod, params)
    workloads = sorted(conv_workloads(mod), key=lambda item: -item[0].macs * item[1])
    if inputs is None:
        main = mod["main"].params
        types = [p.checked_type if p.has_type else p.type_annotation for p in main]
        inputs = dict(zip((p.name_hint for p in main), random_inputs(types)))
    base = PassContext.current()
    target_label, cpu = target_name(target), host_cpu()

    def runner(chosen: dict[str, dict]) -> Callable:
        config = {**base.config, **pass_config(chosen)}
        with PassContext(opt_level=max(base.opt_level, 3), config=config,
                         disabled_pass=base.disabled_pass, required_pass=base.required_pass):
            lib = build(mod, target=target)
        gm = GraphModule(lib)
        gm.set_input(**inputs)
        gm.run()
        return gm.run

    chosen = {wl.key: _rule(wl) for wl, _ in workloads}
    current = runner(chosen)
    better: dict[str, dict] = {}
    for wl, count in workloads:
        best = (MIN_GAIN, None, None)  # (median ratio to the current choice, choice, run)
        for choice in choices(wl):
            if choice == chosen[wl.key]:
                continue
            record = Record(task=wl.key, name=f"{wl.key} x{count}", kind=KIND,
                            target=target_label, cpu=cpu, schedule=choice, costs=[],
                            flops=2.0 * wl.macs * count)
            try:
                run = runner({**chosen, wl.key: choice})
            except Error as exc:  # a choice that does not build is a record, not a crash
                record.error, run = f"{type(exc).__name__}: {exc}", None
            if run is not None:
                for _ in range(rounds):  # in alternation: a noisy machine slows both alike
                    record.reference.append(_latency(current, runs))
                    record.costs.append(_latency(run, runs))
            if records is not None:
                append_records(records, [record])
            ratio = record.relative  # as best_configs scores it: what a build will apply
            if log is not None:
                log(f"{wl.key}: {choice} {ratio:.3f}x the current choice's time"
                    + (f" ({record.error})" if record.error else ""))
            if ratio < best[0]:
                best = (ratio, choice, run)
        if best[1] is not None:  # every candidate of a layer against the same reference
            chosen, current = {**chosen, wl.key: best[1]}, best[2]
            better[wl.key] = best[1]
    return better


def chosen_context(better: dict[str, dict]) -> PassContext:
    """The current ``PassContext`` with ``better``'s algorithms merged into its config as
    a build under the records merges them (to extract the kernel tasks of the model as
    it will be built)."""
    ctx = PassContext.current()
    return PassContext(opt_level=ctx.opt_level, required_pass=ctx.required_pass,
                       disabled_pass=ctx.disabled_pass,
                       config=merged_config(ctx.config, pass_config(better)))


__all__ = ["KIND", "choices", "chosen_context", "conv_workloads", "pass_config",
           "tune_conv_algorithms"]
