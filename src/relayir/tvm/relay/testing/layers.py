"""``relay.testing.layers``: Relay's layer helpers for the test workloads.

Each helper is one op whose weights, when not given, are new free variables named
``<name>_weight``, ``<name>_bias``, ``<name>_gamma`` ... and left untyped: type
inference gives them their shapes and ``create_workload`` their values, chosen by
that name suffix (``init.Xavier``). Relay's callers pass ``name=`` as a keyword, with
the op's attributes, so ``name`` is keyword-only here.
"""

from __future__ import annotations

from ..expr import var
from ..op import nn

_KERNEL_LAYOUT = {"NCHW": "OIHW", "NHWC": "HWIO"}
_DEPTHWISE_KERNEL_LAYOUT = {"NCHW": "OIHW", "NHWC": "HWOI"}


def _param(given, name: str):
    return var(name) if given is None else given


def conv2d(data, weight=None, *, name: str, **attrs):
    return nn.conv2d(data, _param(weight, f"{name}_weight"), **attrs)


def conv3d(data, weight=None, *, name: str, **attrs):
    return nn.conv3d(data, _param(weight, f"{name}_weight"), **attrs)


def conv2d_transpose(data, weight=None, *, name: str, **attrs):
    return nn.conv2d_transpose(data, _param(weight, f"{name}_weight"), **attrs)


def dense_add_bias(data, weight=None, bias=None, units=None, *, name: str, **attrs):
    """``dense`` then ``bias_add`` on the last axis."""
    out = nn.dense(data, _param(weight, f"{name}_weight"), units, **attrs)
    return nn.bias_add(out, _param(bias, f"{name}_bias"), axis=-1)


def batch_norm_infer(data, gamma=None, beta=None, moving_mean=None, moving_var=None, *,
                     name: str, **attrs):
    """The normalised output of ``batch_norm`` (its first field); the running
    statistics it also returns are dropped, as at inference."""
    return nn.batch_norm(data, _param(gamma, f"{name}_gamma"), _param(beta, f"{name}_beta"),
                         _param(moving_mean, f"{name}_moving_mean"),
                         _param(moving_var, f"{name}_moving_var"), **attrs)[0]


def conv_kernel_layout(data_layout: str, is_depthwise: bool = False) -> str:
    """The kernel layout the convolution kernels expect beside ``data_layout``."""
    table = _DEPTHWISE_KERNEL_LAYOUT if is_depthwise else _KERNEL_LAYOUT
    if data_layout not in table:
        raise ValueError(f"relay.testing.layers: no kernel layout for data layout "
                         f"{data_layout!r}; expected one of {sorted(table)}")
    return table[data_layout]


def conv_bias_relu(data, *, name: str, bias_axis: int = 1, **conv_attrs):
    """``relu(bias_add(conv2d(data, <name>_weight), <name>_bias))``."""
    out = conv2d(data, name=name, **conv_attrs)
    return nn.relu(nn.bias_add(out, var(f"{name}_bias"), axis=bias_axis))


def conv_bn_relu(data, *, conv_name: str, bn_name: str, epsilon: float = 1e-5,
                 scale: bool = True, **conv_attrs):
    """``relu(batch_norm(conv2d(data)))``, the convolution unbiased (the norm's beta
    is the bias)."""
    out = conv2d(data, name=conv_name, **conv_attrs)
    out = batch_norm_infer(out, name=bn_name, epsilon=epsilon, scale=scale)
    return nn.relu(out)


__all__ = ["batch_norm_infer", "conv2d", "conv2d_transpose", "conv3d", "conv_bias_relu",
           "conv_bn_relu", "conv_kernel_layout", "dense_add_bias"]
