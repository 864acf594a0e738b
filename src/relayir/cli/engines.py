"""The engines ``relayir compare`` runs side by side: relayir's executors, ONNX Runtime
and PyTorch eager, each prepared once and then run on the same inputs.

A peer that is not installed or does not apply to the model is ``Skipped`` with the
reason (and the ``pip install`` that enables it). torch and onnxruntime are optional
dependencies: they are imported here, when a comparison asks for them.
"""

from __future__ import annotations

import io
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..errors import Error
from ..frontend.common import sanitize_name
from .compiled import EXECUTORS, BuildOptions, compile_model
from .console import Console, one_line
from .runners import flatten

PEERS = ("torch", "onnxruntime")


@dataclass
class Engine:
    name: str
    prepare_s: float
    run: Callable[[], list[np.ndarray]]  # one run on the inputs: the outputs
    timed: Callable[[], float]           # one run: seconds
    note: str = ""
    times: list[float] = field(default_factory=list)
    outputs: list[np.ndarray] = field(default_factory=list)


@dataclass
class Skipped:
    name: str
    reason: str


def _timer(fn: Callable[[], object]) -> Callable[[], float]:
    def timed() -> float:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    return timed


# ---------------------------------------------------------------- relayir


def relayir_engines(mod, params, inputs: dict, options: BuildOptions, static: bool,
                    console: Console) -> list[Engine | Skipped]:
    """The graph executor (static models), the VM, and the AOT module where it builds."""
    engines: list[Engine | Skipped] = []
    for kind in EXECUTORS:
        name = f"relayir {kind}"
        if kind != "vm" and not static:
            engines.append(Skipped(name, "the model has dynamic input dims: fix them with "
                                         "--input-shapes to run it"))
            continue
        try:
            compiled = compile_model(mod, params, replace(options, executor=kind), console)
            runner = compiled.runner()
        except Error as exc:
            if kind != "aot":
                raise
            engines.append(Skipped(name, one_line(exc)))
            continue
        runner.set_inputs(inputs)
        engines.append(Engine(name, compiled.seconds, runner.run, runner.time_run,
                              compiled.cache_note))
    return engines


# ---------------------------------------------------------------- onnxruntime


def onnxruntime_engine(path: str, inputs: dict, threads: int | None) -> Engine | Skipped:
    try:
        import onnxruntime as ort
    except ImportError:
        return Skipped("onnxruntime", "not installed: pip install onnxruntime")
    suffix = Path(path).suffix.lower()
    note = ""
    if suffix == ".onnx":
        model = Path(path).read_bytes()
    elif suffix == ".pt2":
        try:
            model = _pt2_to_onnx(path, inputs)
        except Exception as exc:  # noqa: BLE001  (the exporter's many failure kinds)
            return Skipped("onnxruntime", f"torch.onnx.export failed: {one_line(exc)}")
        note = "the .pt2 exported to ONNX at these input shapes"
    else:
        return Skipped("onnxruntime", f"runs ONNX models; {Path(path).name} is Relay text")
    opts = ort.SessionOptions()
    if os.environ.get("OMP_WAIT_POLICY", "").lower() == "passive":  # as relayir's, torch's
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if threads:
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
    start = time.perf_counter()
    session = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    prepare = time.perf_counter() - start
    # relayir keeps ONNX input names as they are; older artifacts used sanitised ones
    feed = {i.name: inputs[n] for i in session.get_inputs()
            for n in (i.name, sanitize_name(i.name)) if n in inputs}

    def run() -> list[np.ndarray]:
        return [np.asarray(o) for o in session.run(None, feed)]

    return Engine("onnxruntime", prepare, run, _timer(run), note)


def _pt2_to_onnx(path: str, inputs: dict) -> bytes:
    """The saved program's module exported by the TorchScript exporter at the inputs'
    shapes (the dynamo exporter needs onnxscript)."""
    import torch

    module = torch.export.load(path).module()
    for p in module.parameters():
        p.requires_grad_(False)

    class Wrapper(torch.nn.Module):
        """Holds the module without registering it: the exporter's ``train(False)``
        would reach it, and an unlifted ExportedProgram module refuses ``train``."""

        def __init__(self):
            super().__init__()
            object.__setattr__(self, "inner", module)

        def forward(self, *args):
            return self.inner(*args)

    args = tuple(torch.from_numpy(a) for a in inputs.values())
    buf = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(Wrapper(), args, buf, input_names=list(inputs), dynamo=False,
                          opset_version=17)
    return buf.getvalue()


# ---------------------------------------------------------------- torch


def torch_engine(path: str, inputs: dict, threads: int | None) -> Engine | Skipped:
    if Path(path).suffix.lower() != ".pt2":
        return Skipped("torch", "PyTorch eager runs .pt2 models (torch.export.save); "
                                f"{Path(path).name} is not one")
    try:
        import torch
    except ImportError:
        return Skipped("torch", "not installed: pip install torch")
    if threads:
        torch.set_num_threads(threads)
    start = time.perf_counter()
    module = torch.export.load(path).module()
    prepare = time.perf_counter() - start
    args = tuple(torch.from_numpy(a) for a in inputs.values())

    def call():
        with torch.inference_mode():
            return module(*args)

    def run() -> list[np.ndarray]:
        return flatten(call())  # inference-mode tensors: np.asarray views them

    return Engine("torch", prepare, run, _timer(call), f"eager, {torch.get_num_threads()} "
                                                        f"threads")


__all__ = ["PEERS", "Engine", "Skipped", "onnxruntime_engine", "relayir_engines",
           "torch_engine"]
