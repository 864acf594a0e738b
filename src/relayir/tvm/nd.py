"""``tvm.nd``: ``array``, ``empty``, ``NDArray`` (``runtime.ndarray``)."""

from .runtime.ndarray import (  # noqa: F401
    Device,
    NDArray,
    array,
    cpu,
    cuda,
    device,
    empty,
    from_dlpack,
    gpu,
)

__all__ = ["Device", "NDArray", "array", "cpu", "cuda", "device", "empty", "from_dlpack", "gpu"]
