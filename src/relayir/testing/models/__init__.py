"""Built-in workloads: Relay programs with deterministic random weights.

Each builder returns ``(mod, params)``: ``@main`` takes the inputs first, then every
weight, and ``params`` maps the weight names to float32 numpy arrays. The names are the
``state_dict()`` keys of the equivalent PyTorch module (``torch_models``), so the torch
twin loads them and serves as the reference; the MLP keeps a numpy reference that needs
no torch.

``WORKLOADS[name]`` is ``(builder, reference, make_inputs)``; ``get_workload`` builds
one and binds its reference to the same knobs, ``make_inputs`` makes random valid
inputs for a built module::

    mod, params, reference = get_workload("resnet18", image_size=64)
    inputs = make_inputs("resnet18", mod)
    out = relayir.create_executor("debug", mod, params=params).evaluate()(**inputs)
    expected = reference(params, *inputs.values())
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ...errors import Error
from ...ir.module import IRModule
from .bert import bert
from .bert import make_inputs as _bert_inputs
from .layers import make_data
from .lstm import list_value, lstm, lstm_recursive
from .mlp import mlp, mlp_reference
from .mobilenet import mobilenet_v2
from .resnet import resnet, resnet18, resnet50


class Workload(NamedTuple):
    builder: Callable[..., tuple[IRModule, dict[str, np.ndarray]]]
    reference: Callable[..., np.ndarray]  # (params, *inputs, **knobs) -> output
    make_inputs: Callable[[IRModule, np.random.Generator], dict[str, np.ndarray]]


def _torch_reference(name: str):
    def reference(params, *inputs, **knobs):
        try:
            from . import torch_models
        except ImportError as exc:
            raise Error(f"the reference of the {name} workload runs its PyTorch twin, and "
                        f"torch is not importable ({exc}); install it with "
                        f"pip install 'relayir[torch]'") from None
        return torch_models.run(name, params, *inputs, **knobs)

    reference.__name__ = f"{name}_reference"
    reference.__doc__ = f"The {name} workload run by its PyTorch twin (float64)."
    return reference


WORKLOADS: dict[str, Workload] = {
    "mlp": Workload(mlp, mlp_reference, make_data),
    "resnet18": Workload(resnet18, _torch_reference("resnet18"), make_data),
    "resnet50": Workload(resnet50, _torch_reference("resnet50"), make_data),
    "mobilenet_v2": Workload(mobilenet_v2, _torch_reference("mobilenet_v2"), make_data),
    "bert": Workload(bert, _torch_reference("bert"), _bert_inputs),
    "lstm": Workload(lstm, _torch_reference("lstm"), make_data),
    "lstm_recursive": Workload(lstm_recursive, _torch_reference("lstm_recursive"), make_data),
}


def _workload(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise Error(f"unknown model {name!r}; built-in models: {', '.join(WORKLOADS)}") from None


def get_workload(name: str, **kwargs):
    """``(mod, params, reference)``; ``reference(params, *inputs)`` (numpy in and out)
    computes the same model with the knobs given here."""
    w = _workload(name)
    try:
        bound = inspect.signature(w.builder).bind(**kwargs)
    except TypeError as exc:
        knobs = ", ".join(inspect.signature(w.builder).parameters)
        raise Error(f"model {name!r}: {exc}; its knobs are {knobs}") from None
    bound.apply_defaults()
    mod, params = w.builder(**bound.arguments)
    knobs = {k: v for k, v in bound.arguments.items() if k != "mod"}
    return mod, params, functools.partial(w.reference, **knobs)


def make_inputs(name: str, mod: IRModule, seed: int = 0) -> dict[str, np.ndarray]:
    """Random valid inputs of workload ``name`` for ``mod`` (with or without its weights
    bound), keyed by ``@main``'s input names: standard-normal float32 data, in-range
    int64 token ids."""
    return _workload(name).make_inputs(mod, np.random.default_rng(seed))


__all__ = [
    "WORKLOADS", "Workload", "bert", "get_workload", "list_value", "lstm", "lstm_recursive",
    "make_inputs", "mlp", "mlp_reference", "mobilenet_v2", "resnet", "resnet18", "resnet50",
]
