"""Counter-based random numbers (Relay's ``random`` namespace): a key is a
``Tensor[(10,), uint64]`` value, and every op that draws returns a new key beside its
numbers, so a program is a pure function of its key (the same key, the same numbers).

- ``random.threefry_generate(key, out_shape)`` → ``(next key, uint64 bits of out_shape)``:
  the bits are Threefry-2x64-20 (Salmon et al., "Parallel random numbers: as easy as 1,
  2, 3", SC'11) of the key's two key words over consecutive counter blocks starting at
  the key's counter; the next key has the counter moved past the blocks used;
- ``random.threefry_split(key)`` → two keys whose key words are Threefry blocks of the
  key at counter words that ``generate`` never uses, counters zero.

Key layout: ``[k0, k1, counter, 0, ..., 0]`` (the last seven words are kept at zero).
Relay's key has the same type but another layout, so the bits relayir draws for a seed
are not TVM's; what holds for both is determinism and independence of split keys.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..ir.op import Attrs, OpPattern, call, register_op
from ..ir.types import TensorType, TupleType
from .attrs_util import set_fields
from .type_rel import fail, show_type, tensor

KEY_TYPE = TensorType((10,), "uint64")
_ROTATIONS = (16, 42, 12, 31, 16, 32, 24, 21)
_PARITY = np.uint64(0x1BD11BDAA9FC1A22)
_SPLIT_WORD = np.uint64(1 << 63)  # counter word 1 of the split blocks (generate uses 0)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def threefry2x64(k0: np.uint64, k1: np.uint64, c0: np.ndarray, c1: np.ndarray):
    """Threefry-2x64 with 20 rounds of the counter words ``c0``, ``c1`` (uint64 arrays)."""
    ks = (np.uint64(k0), np.uint64(k1), np.uint64(k0) ^ np.uint64(k1) ^ _PARITY)
    with np.errstate(over="ignore"):
        x0, x1 = c0 + ks[0], c1 + ks[1]
        for r in range(20):
            x0 = x0 + x1
            x1 = _rotl(x1, _ROTATIONS[r % 8]) ^ x0
            if r % 4 == 3:
                s = r // 4 + 1
                x0 = x0 + ks[s % 3]
                x1 = x1 + ks[(s + 1) % 3] + np.uint64(s)
    return x0, x1


def threefry_key(seed: int) -> np.ndarray:
    """The key of ``seed``: key words ``(seed, 0)``, counter 0."""
    key = np.zeros(10, "uint64")
    key[0] = np.uint64(seed % (1 << 64))
    return key


def _check_key(ty) -> None:
    t = tensor(ty, "key")
    if t.shape != KEY_TYPE.shape or t.dtype != "uint64":
        fail(f"key must be a {KEY_TYPE} (a threefry key), found {show_type(t)}")


@dataclasses.dataclass(frozen=True)
class ThreefryGenerateAttrs(Attrs):
    out_shape: tuple = ()

    def __post_init__(self):
        shape = tuple(int(d) for d in self.out_shape)
        if any(d < 0 for d in shape):
            raise ValueError(f"out_shape must be non-negative, found {self.out_shape!r}")
        set_fields(self, out_shape=shape)


def _generate_rel(types, attrs):
    _check_key(types[0])
    return TupleType((KEY_TYPE, TensorType(attrs.out_shape, "uint64")))


def _generate_ref(key, attrs):
    n = math.prod(attrs.out_shape)
    blocks = (n + 1) // 2
    start = key[2]
    with np.errstate(over="ignore"):
        counters = start + np.arange(blocks, dtype="uint64")
    x0, x1 = threefry2x64(key[0], key[1], counters, np.zeros(blocks, "uint64"))
    bits = np.stack([x0, x1], axis=1).reshape(-1)[:n]
    nxt = key.copy()
    with np.errstate(over="ignore"):
        nxt[2] = start + np.uint64(blocks)
    return nxt, bits.reshape(attrs.out_shape)


def _split_rel(types, attrs):
    _check_key(types[0])
    return TupleType((KEY_TYPE, KEY_TYPE))


def _split_ref(key, attrs):
    counters = np.array([key[2], key[2]], "uint64")
    words = np.array([_SPLIT_WORD, _SPLIT_WORD | np.uint64(1)], "uint64")
    x0, x1 = threefry2x64(key[0], key[1], counters, words)
    keys = []
    for a, b in zip(x0, x1):
        k = np.zeros(10, "uint64")
        k[0], k[1] = a, b
        keys.append(k)
    return tuple(keys)


register_op("random.threefry_generate", rel=_generate_rel, ref=_generate_ref,
            pattern=OpPattern.OPAQUE, num_inputs=1, arg_names=("key",),
            attrs=ThreefryGenerateAttrs,
            description="the next key and uint64 random bits of a shape (Threefry-2x64)")
register_op("random.threefry_split", rel=_split_rel, ref=_split_ref, pattern=OpPattern.OPAQUE,
            num_inputs=1, arg_names=("key",),
            description="two independent keys from one (Threefry-2x64)")


def threefry_generate(key, shape):
    return call("random.threefry_generate", [key], out_shape=tuple(shape))


def threefry_split(key):
    return call("random.threefry_split", [key])


__all__ = ["KEY_TYPE", "threefry2x64", "threefry_generate", "threefry_key", "threefry_split"]
