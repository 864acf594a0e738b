"""``relay.frontend``: ``from_pytorch`` and ``from_onnx`` with Relay's signatures, over
relayir's frontends. torch and onnx are imported when a converter runs, not here.

Relay's ``from_pytorch`` takes a TorchScript module (``torch.jit.trace``); relayir's
takes an ``nn.Module`` or an ``ExportedProgram``. A TorchScript module is converted
to an ``ExportedProgram`` first (torch's ``TS2EPConverter``), with example inputs of
the shapes and dtypes in ``input_infos``. Params come back as ``NDArray``s.
"""

from __future__ import annotations

from ....errors import Error
from ....frontend import from_onnx as _from_onnx
from ....frontend import from_pytorch as _from_pytorch
from ...runtime.ndarray import as_ndarray


def _is_torchscript(model) -> bool:
    return type(model).__module__.startswith("torch.jit") or hasattr(model, "_c")


def _shape_and_dtype(info, default_dtype: str) -> tuple[tuple, str]:
    spec = info[1]
    if (isinstance(spec, (tuple, list)) and len(spec) == 2 and isinstance(spec[1], str)):
        return tuple(spec[0]), spec[1]
    return tuple(spec), default_dtype


def _exported_program(script_module, input_infos, default_dtype: str):
    """TorchScript → ``ExportedProgram`` (torch's ``TS2EPConverter``), re-exported with
    the static shapes of ``input_infos`` (the converter makes every dim dynamic)."""
    import torch
    from torch._export.converter import TS2EPConverter

    examples, static = [], True
    for info in input_infos:
        shape, dtype = _shape_and_dtype(info, default_dtype)
        static = static and all(isinstance(d, int) for d in shape)
        examples.append(torch.zeros([d if isinstance(d, int) else 2 for d in shape],
                                    dtype=getattr(torch, dtype)))
    program = TS2EPConverter(script_module, tuple(examples), {}).convert()
    return torch.export.export(program.module(), tuple(examples)) if static else program


def from_pytorch(script_module, input_infos, custom_convert_map=None,
                 default_dtype: str = "float32", use_parser_friendly_name: bool = False,
                 keep_quantized_weight: bool = False, export_renamed_c_graph_path=None,
                 preserve_pytorch_scopes: bool = False):
    """``(mod, params)`` of a TorchScript module, an ``nn.Module`` or an
    ``ExportedProgram``; ``input_infos`` is ``[(name, shape)]`` or
    ``[(name, (shape, dtype))]``. Parameter names are the ``state_dict`` keys, as
    Relay's with ``use_parser_friendly_name=False``."""
    if custom_convert_map:
        raise Error("from_pytorch: custom_convert_map is not offered; relayir's PyTorch "
                    "converters are a table keyed by aten op (relayir.frontend.pytorch_ops)")
    if use_parser_friendly_name:
        raise Error("from_pytorch: use_parser_friendly_name=True is not offered; relayir "
                    "prints any name (quoted: %\"fc1.weight\")")
    model = script_module
    if _is_torchscript(model):
        model = _exported_program(model, input_infos, default_dtype)
    mod, params = _from_pytorch(model, input_infos, default_dtype=default_dtype)
    return mod, {k: as_ndarray(v) for k, v in params.items()}


def from_onnx(model, shape=None, dtype="float32", opset=None, freeze_params: bool = True,
              convert_config=None, export_node_renamed_model_path=None):
    mod, params = _from_onnx(model, shape=shape, dtype=dtype, opset=opset,
                             freeze_params=freeze_params)
    return mod, {k: as_ndarray(v) for k, v in params.items()}


__all__ = ["from_onnx", "from_pytorch"]
