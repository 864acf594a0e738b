"""TfIdfVectorizer over integer tokens (string pools have no Relay dtype).

The pool and the sequence length are static, so counting is comparisons: for each
gram length n and skip distance d, the n strided columns ``x[:, s + k*d]`` are compared
with every pool gram of length n, AND-ed over k and summed over start positions s.
Unigrams count once (skips do not change them), as in onnx's reference.
"""

from __future__ import annotations

import numpy as np

from ...ir.expr import const
from ...op import nn as N
from ...op import reduce as R
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, dtype
from .shape import _static

TABLE = OnnxTable()


def _pool_grams(pool, ngram_counts):
    """[(n, first pool gram number, grams (G, n))] for every gram length in the pool."""
    out, number = [], 0
    bounds = list(ngram_counts) + [len(pool)]
    for n, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:]), start=1):
        grams = np.asarray(pool[lo:hi], "int64").reshape(-1, n)
        out.append((n, number, grams))
        number += len(grams)
    return out, number


def _count(x, n, grams, distance):
    """How often each gram (G, n) occurs with ``distance`` between its items: (B, G)."""
    length = _static(x, "TfIdfVectorizer input")[1]
    starts = length - (n - 1) * distance
    if starts <= 0:
        return None
    hit = None
    for k in range(n):
        column = T.strided_slice(x, [k * distance], [k * distance + starts], axes=[1])
        eq = E.equal(T.expand_dims(column, 2), const(grams[:, k].astype(dtype(x))))
        hit = eq if hit is None else E.logical_and(hit, eq)
    return R.sum(T.cast(hit, "float32"), axis=[1])


@TABLE.register("TfIdfVectorizer", since=9)
def tfidf_vectorizer(x, max_gram_length, max_skip_count, min_gram_length, mode, ngram_counts,
                     ngram_indexes, pool_int64s=None, pool_strings=None, weights=None):
    if pool_int64s is None:
        raise ConversionError("TfIdfVectorizer with a string pool not supported")
    if mode not in ("TF", "IDF", "TFIDF"):
        raise ConversionError(f"TfIdfVectorizer: mode must be TF, IDF or TFIDF, found {mode!r}")
    flat = len(_static(x, "TfIdfVectorizer input")) == 1
    if flat:
        x = T.expand_dims(x, 0)
    size = max(ngram_indexes) + 1
    levels, total = _pool_grams(pool_int64s, ngram_counts)
    if len(ngram_indexes) != total:
        raise ConversionError(f"TfIdfVectorizer: {len(ngram_indexes)} ngram_indexes for "
                              f"{total} pool n-grams")
    counts = None
    for n, first, grams in levels:
        if not len(grams) or not min_gram_length <= n <= max_gram_length:
            continue
        # gram number → output column, as a (G, size) 0/1 matrix
        to_out = np.zeros((len(grams), size), "float32")
        to_out[np.arange(len(grams)), np.asarray(ngram_indexes[first:first + len(grams)])] = 1
        for distance in range(1, (1 if n == 1 else max_skip_count + 1) + 1):
            c = _count(x, n, grams, distance)
            if c is None:
                continue
            c = N.dense(c, const(np.ascontiguousarray(to_out.T)))
            counts = c if counts is None else E.add(counts, c)
    batch = _static(x, "TfIdfVectorizer input")[0]
    if counts is None:
        counts = const(np.zeros((batch, size), "float32"))
    w = None if not weights else const(np.asarray(weights, "float32"))
    if mode == "IDF":
        found = E.greater(counts, const(np.float32(0)))
        counts = T.where(found, w if w is not None else const(np.float32(1)),
                         const(np.float32(0)))
    elif mode == "TFIDF" and w is not None:
        counts = E.multiply(counts, w)
    return T.squeeze(counts, [0]) if flat else counts
