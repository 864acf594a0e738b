"""TVM's ``NDArray`` and devices, as numpy.

``NDArray`` is a subclass of ``numpy.ndarray`` with TVM's methods (``numpy()``,
``asnumpy()``, ``copyto``, ``copyfrom``, ``device``), so every numpy function takes it
and it goes into relayir's executors unconverted. relayir's own API keeps returning
plain numpy arrays; the compatibility layer views them as ``NDArray`` (no copy) on the
way out. There is one device, the host CPU: ``cpu(0)``; other device kinds exist as
names (``tvm.cuda().exist`` is False) and a build for them is refused by ``Target``.
"""

from __future__ import annotations

import numpy as np

from ...errors import Error

DEVICE_TYPES = {"cpu": 1, "llvm": 1, "c": 1, "stackvm": 1, "ext_dev": 12, "cuda": 2,
                "gpu": 2, "nvptx": 2, "cl": 4, "opencl": 4, "vulkan": 7, "metal": 8,
                "rocm": 10, "hexagon": 16, "webgpu": 17}
DEVICE_NAMES = {1: "cpu", 2: "cuda", 4: "opencl", 7: "vulkan", 8: "metal", 10: "rocm",
                12: "ext_dev", 16: "hexagon", 17: "webgpu"}


class DeviceError(Error):
    """A device relayir cannot run on, or an unknown device name."""


class Device:
    """``tvm.cpu(0)``; only ``cpu`` devices exist (``exist`` is False for the others)."""

    __slots__ = ("device_type", "device_id")

    def __init__(self, device_type: int | str = 1, device_id: int = 0):
        if isinstance(device_type, str):
            name = device_type.split()[0]
            if name not in DEVICE_TYPES:
                raise DeviceError(f"unknown device {device_type!r}; relayir knows "
                                  f"{', '.join(sorted(DEVICE_TYPES))}")
            device_type = DEVICE_TYPES[name]
        self.device_type = int(device_type)
        self.device_id = int(device_id)

    @property
    def exist(self) -> bool:
        return self.device_type == 1

    def sync(self) -> None:
        """Kernels run synchronously on the host: nothing to wait for."""

    def __eq__(self, other) -> bool:
        return (isinstance(other, Device) and other.device_type == self.device_type
                and other.device_id == self.device_id)

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{DEVICE_NAMES.get(self.device_type, self.device_type)}({self.device_id})"

    __str__ = __repr__


def device(dev_type: int | str = "cpu", dev_id: int = 0) -> Device:
    """``tvm.device("cpu", 0)`` / ``tvm.device("llvm")``."""
    return Device(dev_type, dev_id)


def cpu(dev_id: int = 0) -> Device:
    return Device(1, dev_id)


def cuda(dev_id: int = 0) -> Device:
    return Device(2, dev_id)


gpu = cuda


def opencl(dev_id: int = 0) -> Device:
    return Device(4, dev_id)


def vulkan(dev_id: int = 0) -> Device:
    return Device(7, dev_id)


def metal(dev_id: int = 0) -> Device:
    return Device(8, dev_id)


def rocm(dev_id: int = 0) -> Device:
    return Device(10, dev_id)


def ext_dev(dev_id: int = 0) -> Device:
    return Device(12, dev_id)


class NDArray(np.ndarray):
    """A numpy array with TVM's ``NDArray`` methods."""

    def numpy(self) -> np.ndarray:
        """A plain numpy copy (TVM copies device memory to the host here)."""
        return np.array(self, copy=True).view(np.ndarray)

    asnumpy = numpy

    @property
    def device(self) -> Device:
        return cpu(0)

    ctx = device

    def copyfrom(self, source) -> NDArray:
        source = np.asarray(source)
        if source.shape != self.shape:
            raise Error(f"copyfrom: array shape {self.shape}, source shape {source.shape}")
        np.copyto(self, source.astype(self.dtype, copy=False))
        return self

    def copyto(self, target):
        """Into another ``NDArray`` (same shape), or to a device: a new array."""
        if isinstance(target, Device):
            return array(self, target)
        if isinstance(target, np.ndarray):
            if target.shape != self.shape:
                raise Error(f"copyto: array shape {self.shape}, target shape {target.shape}")
            np.copyto(target, self.astype(target.dtype, copy=False))
            return target
        raise Error(f"copyto takes an NDArray or a device, found {type(target).__name__}")

    def same_as(self, other) -> bool:
        return self is other

    @property
    def handle(self) -> int:
        return self.ctypes.data

    def __repr__(self) -> str:
        return f"<tvm.nd.NDArray shape={self.shape}, {self.device}>\n{self.numpy()!r}"

    def __str__(self) -> str:
        return str(self.numpy())


def array(arr, device: Device | None = None, mem_scope=None) -> NDArray:
    """``tvm.nd.array(x, dev)``: a copy of ``x`` as an ``NDArray``."""
    _check_device(device)
    if hasattr(arr, "detach") and hasattr(arr, "numpy"):  # torch
        arr = arr.detach().cpu().numpy()
    return np.array(arr, copy=True).view(NDArray)


def empty(shape, dtype="float32", device: Device | None = None, mem_scope=None) -> NDArray:
    """``tvm.nd.empty(shape, dtype, dev)`` (zero-filled: reading it gives no garbage)."""
    _check_device(device)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    return np.zeros(shape, dtype=dtype).view(NDArray)


def from_dlpack(dltensor) -> NDArray:
    return np.from_dlpack(dltensor).view(NDArray)


def as_ndarray(value: np.ndarray) -> NDArray:
    """``value`` viewed as an ``NDArray`` (no copy)."""
    return value.view(NDArray) if isinstance(value, np.ndarray) else np.asarray(value).view(
        NDArray)


def _check_device(device) -> None:
    if device is not None and isinstance(device, Device) and not device.exist:
        raise DeviceError(f"relayir runs on the host CPU only; found device {device}")


__all__ = ["DEVICE_TYPES", "Device", "DeviceError", "NDArray", "array", "as_ndarray", "cpu",
           "cuda", "device", "empty", "ext_dev", "from_dlpack", "gpu", "metal", "opencl",
           "rocm", "vulkan"]
