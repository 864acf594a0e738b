"""A BERT encoder (Devlin et al. 2019) shaped like the models ONNX Runtime benchmarks.

The graph is written the way TVM's ONNX/PyTorch imports of BERT look: activations are
kept 2-D ``(batch * seq, hidden)`` around ``nn.dense`` (+ ``add`` for the bias),
attention reshapes/transposes to ``(batch * heads, seq, head_dim)`` for two
``nn.batch_matmul`` calls, GELU is the exact ``x * 0.5 * (1 + erf(x / sqrt(2)))``.
No attention mask (every token attends to every token), token type 0 everywhere, no
pooler: the output is the last hidden state ``(batch, seq, hidden)``. Parameter names
are Hugging Face ``BertModel(add_pooling_layer=False)`` ``state_dict()`` keys.

``seq_len`` may be dynamic (a name such as ``"seq"`` for a symbolic dimension, or
``Any()``): one module then serves every length. Reshapes infer the sequence axis
(``-1``) and the position ids become an input ``%position_ids: int64 (seq,)``
(Hugging Face's optional ``position_ids``; ``make_inputs`` passes ``arange(seq)``), since
no static op makes ``arange`` of a run-time length.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import Error
from ...ir.expr import Expr, const, var
from ...ir.module import IRModule
from ...ir.types import Any, SymbolicDim, normalize_dim
from ...op import nn
from ...op.tensor import erf
from ...op.transform import reshape, take, transpose, zeros_like
from .layers import ParamSet, dense, input_type

LAYER_NORM_EPS = 1e-12


def _layer_norm(ps: ParamSet, x: Expr, name: str, hidden: int) -> Expr:
    gamma = ps.normal(f"{name}.weight", (hidden,), 0.1, mean=1.0)
    beta = ps.normal(f"{name}.bias", (hidden,), 0.1)
    return nn.layer_norm(x, gamma, beta, axis=-1, epsilon=LAYER_NORM_EPS)


def _gelu(x: Expr) -> Expr:
    return x * const(0.5) * (const(1.0) + erf(x * const(1 / math.sqrt(2))))


def _heads(x: Expr, batch: int, seq: int, heads: int, head_dim: int) -> Expr:
    """``(batch * seq, hidden)`` -> ``(batch * heads, seq, head_dim)``; ``seq`` is -1 (inferred)
    when the length is dynamic."""
    x = transpose(reshape(x, (batch, seq, heads, head_dim)), (0, 2, 1, 3))
    return reshape(x, (batch * heads, seq, head_dim))


def _layer(ps: ParamSet, x: Expr, name: str, batch: int, seq: int, hidden: int, heads: int,
           intermediate: int) -> Expr:
    head_dim = hidden // heads
    att = f"{name}.attention"
    q, k, v = (_heads(dense(ps, x, f"{att}.self.{p}", hidden, hidden, bias_add=False),
                      batch, seq, heads, head_dim) for p in ("query", "key", "value"))
    scores = nn.batch_matmul(q, k) * const(1 / math.sqrt(head_dim))  # (b*h, seq, seq)
    probs = nn.softmax(scores, axis=-1)
    ctx = nn.batch_matmul(probs, transpose(v, (0, 2, 1)))  # (b*h, seq, head_dim)
    ctx = transpose(reshape(ctx, (batch, heads, seq, head_dim)), (0, 2, 1, 3))
    ctx = reshape(ctx, (batch * seq if seq > 0 else -1, hidden))
    attn = dense(ps, ctx, f"{att}.output.dense", hidden, hidden, bias_add=False)
    x = _layer_norm(ps, attn + x, f"{att}.output.LayerNorm", hidden)
    inter = _gelu(dense(ps, x, f"{name}.intermediate.dense", hidden, intermediate,
                        bias_add=False))
    out = dense(ps, inter, f"{name}.output.dense", intermediate, hidden, bias_add=False)
    return _layer_norm(ps, out + x, f"{name}.output.LayerNorm", hidden)


def bert(batch_size: int = 1, seq_len: int | str | Any = 128, num_layers: int = 4,
         hidden: int = 256, heads: int = 4, intermediate: int = 1024, vocab: int = 30522,
         max_position: int = 512, type_vocab: int = 2, seed: int = 0):
    """``(mod, params)``: ``@main(%input_ids: int64 (batch, seq), weights...)`` returns the
    last hidden state, float32 ``(batch, seq, hidden)``. A dynamic ``seq_len`` (a name or
    ``Any()``) adds the input ``%position_ids`` (see the module docstring)."""
    if hidden % heads:
        raise Error(f"hidden={hidden} is not a multiple of heads={heads}")
    seq_dim = normalize_dim(seq_len)
    dynamic = isinstance(seq_dim, (Any, SymbolicDim))
    if not dynamic and seq_len > max_position:
        raise Error(f"seq_len={seq_len} exceeds max_position={max_position}")
    seq = -1 if dynamic else seq_len  # reshapes infer a dynamic length
    ps = ParamSet(seed)
    ids = var("input_ids", shape=(batch_size, seq_dim), dtype="int64")
    word = ps.normal("embeddings.word_embeddings.weight", (vocab, hidden))
    pos = ps.normal("embeddings.position_embeddings.weight", (max_position, hidden))
    tok = ps.normal("embeddings.token_type_embeddings.weight", (type_vocab, hidden))
    if dynamic:
        position_ids = var("position_ids", shape=(seq_dim,), dtype="int64")
        inputs = [ids, position_ids]
        token_types = zeros_like(ids)
    else:
        position_ids = const(np.arange(seq_len, dtype="int64"))
        inputs = [ids]
        token_types = const(np.zeros(seq_len, dtype="int64"))
    x = (take(word, ids, axis=0)  # (batch, seq, hidden)
         + take(pos, position_ids, axis=0)  # (seq, hidden)
         + take(tok, token_types, axis=0))  # token type 0
    x = _layer_norm(ps, x, "embeddings.LayerNorm", hidden)
    x = reshape(x, (batch_size * seq if seq > 0 else -1, hidden))
    for i in range(num_layers):
        x = _layer(ps, x, f"encoder.layer.{i}", batch_size, seq, hidden, heads,
                   intermediate)
    return ps.module(inputs, reshape(x, (batch_size, seq, hidden)))


def make_inputs(mod: IRModule, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Token ids in ``[0, vocab)``. The vocabulary size is the word-embedding table's:
    ``@main``'s parameter, or once weights are bound, the constant ``%input_ids`` indexes.
    A dynamic sequence axis gets length 128 (``make_inputs_of_length`` picks another)."""
    return make_inputs_of_length(mod, rng, 128)


def make_inputs_of_length(mod: IRModule, rng: np.random.Generator,
                          seq_len: int) -> dict[str, np.ndarray]:
    """``make_inputs`` with ``seq_len`` for a dynamic sequence axis (static axes keep their
    size), plus ``position_ids`` when the module takes them."""
    shape = tuple(d if isinstance(d, int) else seq_len
                  for d in input_type(mod, "input_ids").shape)
    out = {"input_ids": rng.integers(0, _vocab_size(mod), shape, dtype="int64")}
    if any(p.name_hint == "position_ids" for p in mod["main"].params):
        out["position_ids"] = np.arange(shape[1], dtype="int64")
    return out


def _vocab_size(mod: IRModule) -> int:
    from ...ir.expr import Call, Constant
    from ...ir.functor import post_order

    fn = mod["main"]
    for p in fn.params:
        if p.name_hint == "embeddings.word_embeddings.weight":
            return p.type_annotation.shape[0]
    # weights bound as constants: the word table is the data of the take on %input_ids
    ids = next(p for p in fn.params if p.name_hint == "input_ids")
    for node in post_order(fn.body):
        if (isinstance(node, Call) and getattr(node.op, "name", None) == "take"
                and node.args[1] is ids and isinstance(node.args[0], Constant)):
            return node.args[0].data.shape[0]
    raise Error("cannot find the vocabulary size: no take of %input_ids")
