"""``tvm.contrib.nvcc``: relayir has no CUDA; the capability queries say no."""


def have_fp16(compute_version) -> bool:
    return False


def have_int8(compute_version) -> bool:
    return False


def have_tensorcore(compute_version=None, target=None) -> bool:
    return False


__all__ = ["have_fp16", "have_int8", "have_tensorcore"]
