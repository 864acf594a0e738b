"""Frontends: import models from other frameworks as Relay modules.

The framework is imported only when its frontend is called: ``import relayir`` needs
numpy alone.
"""

from .common import (
    ConversionError,
    ConverterTable,
    DuplicateConverterError,
    NoImportInProgressError,
    UnsupportedOperatorError,
    sanitize_name,
)
from .load_model import load_model


def from_pytorch(model, input_infos, default_dtype="float32", keep_params_as_inputs=True):
    """Import a PyTorch ``nn.Module`` or ``ExportedProgram`` (needs torch); see
    ``relayir.frontend.pytorch.from_pytorch``."""
    from .pytorch import from_pytorch as convert

    return convert(model, input_infos, default_dtype=default_dtype,
                   keep_params_as_inputs=keep_params_as_inputs)


def from_onnx(model, shape=None, dtype="float32", opset=None, freeze_params=True,
              const_inputs=None):
    """Import an ONNX ``ModelProto`` or ``.onnx`` path (needs onnx); see
    ``relayir.frontend.onnx.from_onnx``."""
    from .onnx import from_onnx as convert

    return convert(model, shape=shape, dtype=dtype, opset=opset, freeze_params=freeze_params,
                   const_inputs=const_inputs)


__all__ = ["ConversionError", "ConverterTable", "DuplicateConverterError",
           "NoImportInProgressError", "UnsupportedOperatorError", "from_onnx", "from_pytorch",
           "sanitize_name"]
