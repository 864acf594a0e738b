"""C routines of the recurrent sequence ops (``nn.lstm_sequence``, ``nn.gru_sequence``,
``nn.rnn_sequence``; see ``op/nn/recurrent.py`` for their maths).

One call runs every time step. Each thread owns a fixed range of blocks of hidden units
for the whole sequence, so its slice of the recurrent weight stays in its own cache from
step to step; a barrier ends each step (the next one reads the whole state). Per block
and batch row the gate pre-activations of ``block`` units are held in registers
(``acc[gates][block]``, ``block`` a constant in the fast paths), fed by one contiguous
panel of the packed weight (``weight[blk][k][gate][v]``), and the cell update is applied
to them at once: the gates never go to memory.

The input projection is not here: ``data`` already holds it for all steps (one GEMM).
Written once with ``$T`` (element type) and ``$S`` (suffix) and instantiated for float32
(the vectorisable ``rl_expf``/``rl_tanhf`` of ``HEADER``) and float64 (libm).
"""

from __future__ import annotations

from string import Template

from ..op.nn.recurrent import MAX_BLOCK  # acc[gates][block] lives on the stack

_HELPERS = Template(r"""
static inline $T rl_sigmoid_$S($T x) { return ($T)1 / (($T)1 + $EXP(-x)); }
static inline $T rl_tanh_$S($T x) { return $TANH(x); }

/* Batch rows run together: each weight value loaded serves all of them (as many as
   keep rows * gates * 16 accumulators in the vector registers). */
#if defined(__AVX512F__)
#define RL_REC_ROWS_$S ($ROWS512)
#else
#define RL_REC_ROWS_$S ($ROWS256)
#endif
#define RL_REC_MAX_ROWS_$S ($ROWS512)

/* acc[r][g][v] += sum_k h[r][k] * panel[k][g][v] for `rows` state rows (h: rows
   `hidden` apart) and the gates g0 <= g < g1 of one block of packed weight (`gates` per
   row of the panel). Inlined with constant `rows` and `block`, acc stays in
   registers. */
static inline __attribute__((always_inline)) void rl_rec_panel_$S(
    $T* restrict acc, const $T* restrict panel, const $T* restrict h, int rows,
    int64_t hidden, int gates, int g0, int g1, int block) {
  const int width = gates * block;
  for (int64_t k = 0; k < hidden; ++k) {
    const $T* restrict p = panel + k * width;
    for (int r = 0; r < rows; ++r) {
      const $T hk = h[r * hidden + k];
      for (int g = g0; g < g1; ++g) {
        #pragma omp simd
        for (int v = 0; v < block; ++v)
          acc[r * width + g * block + v] += p[g * block + v] * hk;
      }
    }
  }
}

/* acc[r][g][v] = src[r * row + g * hidden + v] for the n (<= block) units of a block, 0
   past them (`gates` per accumulator row). */
static inline __attribute__((always_inline)) void rl_rec_load_$S(
    $T* restrict acc, const $T* restrict src, int64_t row, int64_t hidden, int rows,
    int gates, int g0, int g1, int block, int64_t n) {
  for (int r = 0; r < rows; ++r)
    for (int g = g0; g < g1; ++g) {
      $T* restrict a = acc + (r * gates + g) * block;
      const $T* restrict from = src + r * row + g * hidden;
      if (n == block) {
        #pragma omp simd
        for (int v = 0; v < block; ++v) a[v] = from[v];
      } else {
        for (int v = 0; v < block; ++v) a[v] = v < n ? from[v] : 0;
      }
    }
}

/* fn(args..., rows, block) with rows and block compile-time constants in the common
   cases (the `rows` given here must be a constant). */
#define RL_REC_CALL_$S(fn, rows, ...) \
  do { \
    if (block == 16) fn(__VA_ARGS__, rows, 16); \
    else if (block == 32) fn(__VA_ARGS__, rows, 32); \
    else fn(__VA_ARGS__, rows, (int)block); \
  } while (0)
""")

_LSTM = Template(r"""
/* One block of units j0..j0+n of `rows` batch rows: gates = x + h W, then the LSTM cell.
   x rows are 4 * hidden apart; h, c and y rows hidden apart. */
static inline __attribute__((always_inline)) void rl_lstm_block_$S(
    const $T* restrict x, const $T* restrict panel, const $T* restrict h,
    $T* restrict c, $T* restrict y, int64_t hidden, int64_t n, int rows, int block) {
  $T acc[RL_REC_MAX_ROWS_$S * 4 * $MAX_BLOCK];
  rl_rec_load_$S(acc, x, 4 * hidden, hidden, rows, 4, 0, 4, block, n);
  rl_rec_panel_$S(acc, panel, h, rows, hidden, 4, 0, 4, block);
  for (int r = 0; r < rows; ++r) {
    const $T* restrict a = acc + r * 4 * block;
    $T* restrict cr = c + r * hidden;
    $T* restrict yr = y + r * hidden;
    #pragma omp simd
    for (int64_t v = 0; v < n; ++v) {
      const $T cv = rl_sigmoid_$S(a[block + v]) * cr[v]
                    + rl_sigmoid_$S(a[v]) * rl_tanh_$S(a[2 * block + v]);
      cr[v] = cv;
      yr[v] = rl_sigmoid_$S(a[3 * block + v]) * rl_tanh_$S(cv);
    }
  }
}

/* nn.lstm_sequence: data (seq, batch, 4H) = the input projection, weight packed
   (blocks, H, 4, block); y (seq, batch, H), h_n and c_n (batch, H). c_n holds the cell
   state while the steps run. */
int32_t rl_lstm_sequence_$S(const $T* restrict data, const $T* restrict h0,
                            const $T* restrict c0, const $T* restrict weight,
                            $T* restrict y, $T* restrict h_n, $T* restrict c_n,
                            int64_t seq, int64_t batch, int64_t hidden, int64_t block,
                            int64_t reverse, int64_t min_work) {
  const int64_t blocks = (hidden + block - 1) / block, row = batch * hidden;
  const int64_t rows = RL_REC_ROWS_$S, whole = batch - batch % rows;
  const int team = rl_team(batch * 4 * hidden * hidden, min_work, blocks);
  #pragma omp parallel num_threads(team) if(team > 1)
  {
    rl_team_arrive();
    const int64_t nt = rl_team_size(), tid = rl_thread_num();
    const int64_t lo = blocks * tid / nt, hi = blocks * (tid + 1) / nt;
    const int64_t j_lo = lo * block, j_hi = hi * block < hidden ? hi * block : hidden;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = j_lo; j < j_hi; ++j) c_n[b * hidden + j] = c0[b * hidden + j];
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t t = reverse ? seq - 1 - s : s;
      const $T* restrict hp = s == 0 ? h0 : y + (reverse ? t + 1 : t - 1) * row;
      for (int64_t blk = lo; blk < hi; ++blk) {
        const int64_t j0 = blk * block, n = hidden - j0 < block ? hidden - j0 : block;
        const $T* restrict panel = weight + blk * hidden * 4 * block;
        for (int64_t b = 0; b < batch; b += b < whole ? rows : 1) {
          const $T* restrict x = data + (t * batch + b) * 4 * hidden + j0;
          $T* restrict c = c_n + b * hidden + j0;
          $T* restrict yo = y + t * row + b * hidden + j0;
          if (b < whole)
            RL_REC_CALL_$S(rl_lstm_block_$S, RL_REC_ROWS_$S, x, panel, hp + b * hidden, c,
                           yo, hidden, n);
          else
            RL_REC_CALL_$S(rl_lstm_block_$S, 1, x, panel, hp + b * hidden, c, yo, hidden, n);
        }
      }
      rl_team_barrier();
    }
  }
  memcpy(h_n, seq ? y + (reverse ? 0 : seq - 1) * row : h0, (size_t)row * sizeof($T));
  return 0;
}
""")

_GRU = Template(r"""
/* One block, linear_before_reset: r, z, n from x and h W + bias in one pass. x rows are
   3 * hidden apart, h (the whole previous state), hj (its units of this block) and y
   rows hidden apart. */
static inline __attribute__((always_inline)) void rl_gru_block_$S(
    const $T* restrict x, const $T* restrict panel, const $T* restrict h,
    const $T* restrict hj, const $T* restrict bias, $T* restrict y, int64_t hidden,
    int64_t n, int rows, int block) {
  $T acc[RL_REC_MAX_ROWS_$S * 3 * $MAX_BLOCK];
  rl_rec_load_$S(acc, bias, 0, hidden, rows, 3, 0, 3, block, n);
  rl_rec_panel_$S(acc, panel, h, rows, hidden, 3, 0, 3, block);
  for (int r = 0; r < rows; ++r) {
    const $T* restrict a = acc + r * 3 * block;
    const $T* restrict xr = x + r * 3 * hidden;
    #pragma omp simd
    for (int64_t v = 0; v < n; ++v) {
      const $T rv = rl_sigmoid_$S(xr[v] + a[v]);
      const $T z = rl_sigmoid_$S(xr[hidden + v] + a[block + v]);
      const $T nv = rl_tanh_$S(xr[2 * hidden + v] + rv * a[2 * block + v]);
      y[r * hidden + v] = (($T)1 - z) * nv + z * hj[r * hidden + v];
    }
  }
}

/* Reset before the product, first half: r and z; keeps r * h (in rh) and z (in y). */
static inline __attribute__((always_inline)) void rl_gru_gates_$S(
    const $T* restrict x, const $T* restrict panel, const $T* restrict h,
    const $T* restrict hj, const $T* restrict bias, $T* restrict rh, $T* restrict y,
    int64_t hidden, int64_t n, int rows, int block) {
  $T acc[RL_REC_MAX_ROWS_$S * 3 * $MAX_BLOCK];
  rl_rec_load_$S(acc, bias, 0, hidden, rows, 3, 0, 2, block, n);
  rl_rec_panel_$S(acc, panel, h, rows, hidden, 3, 0, 2, block);
  for (int r = 0; r < rows; ++r) {
    const $T* restrict a = acc + r * 3 * block;
    const $T* restrict xr = x + r * 3 * hidden;
    #pragma omp simd
    for (int64_t v = 0; v < n; ++v) {
      rh[r * hidden + v] = rl_sigmoid_$S(xr[v] + a[v]) * hj[r * hidden + v];
      y[r * hidden + v] = rl_sigmoid_$S(xr[hidden + v] + a[block + v]);
    }
  }
}

/* Second half: n = tanh(x_n + (r * h) W_n + b_n), h = (1 - z) n + z h. */
static inline __attribute__((always_inline)) void rl_gru_update_$S(
    const $T* restrict x, const $T* restrict panel, const $T* restrict hj,
    const $T* restrict rh, const $T* restrict bias, $T* restrict y, int64_t hidden,
    int64_t n, int rows, int block) {
  $T acc[RL_REC_MAX_ROWS_$S * 3 * $MAX_BLOCK];
  rl_rec_load_$S(acc, bias, 0, hidden, rows, 3, 2, 3, block, n);
  rl_rec_panel_$S(acc, panel, rh, rows, hidden, 3, 2, 3, block);
  for (int r = 0; r < rows; ++r) {
    const $T* restrict a = acc + r * 3 * block;
    const $T* restrict xr = x + r * 3 * hidden;
    #pragma omp simd
    for (int64_t v = 0; v < n; ++v) {
      const $T z = y[r * hidden + v];
      const $T nv = rl_tanh_$S(xr[2 * hidden + v] + a[2 * block + v]);
      y[r * hidden + v] = (($T)1 - z) * nv + z * hj[r * hidden + v];
    }
  }
}

/* One block of `rows` batch rows in step half `half` (0, 2: reset before the product;
   2 alone: linear_before_reset). */
static inline __attribute__((always_inline)) void rl_gru_rows_$S(
    const $T* restrict x, const $T* restrict panel, const $T* restrict h,
    const $T* restrict bias, $T* restrict rh, $T* restrict y, int64_t hidden, int64_t j0,
    int64_t n, int64_t lbr, int half, int rows, int block) {
  if (lbr)
    rl_gru_block_$S(x, panel, h, h + j0, bias + j0, y, hidden, n, rows, block);
  else if (half == 0)
    rl_gru_gates_$S(x, panel, h, h + j0, bias + j0, rh + j0, y, hidden, n, rows, block);
  else
    rl_gru_update_$S(x, panel, h + j0, rh, bias + j0, y, hidden, n, rows, block);
}

/* nn.gru_sequence: data (seq, batch, 3H) = the input projection (gates r, z, n), weight
   packed (blocks, H, 3, block), bias (3H) added to h W; y (seq, batch, H), h_n (batch,
   H). Without linear_before_reset a step has two halves with a barrier between them,
   and h_n holds r * h in between. */
int32_t rl_gru_sequence_$S(const $T* restrict data, const $T* restrict h0,
                           const $T* restrict weight, const $T* restrict bias,
                           $T* restrict y, $T* restrict h_n, int64_t seq, int64_t batch,
                           int64_t hidden, int64_t block, int64_t reverse,
                           int64_t linear_before_reset, int64_t min_work) {
  const int64_t blocks = (hidden + block - 1) / block, row = batch * hidden;
  const int64_t rows = RL_REC_ROWS_$S, whole = batch - batch % rows;
  const int team = rl_team(batch * 3 * hidden * hidden, min_work, blocks);
  #pragma omp parallel num_threads(team) if(team > 1)
  {
    rl_team_arrive();
    const int64_t nt = rl_team_size(), tid = rl_thread_num();
    const int64_t lo = blocks * tid / nt, hi = blocks * (tid + 1) / nt;
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t t = reverse ? seq - 1 - s : s;
      const $T* restrict hp = s == 0 ? h0 : y + (reverse ? t + 1 : t - 1) * row;
      for (int half = linear_before_reset ? 2 : 0; half < 3; ++half) {
        if (half == 1) {
          rl_team_barrier();
          continue;
        }
        for (int64_t blk = lo; blk < hi; ++blk) {
          const int64_t j0 = blk * block, n = hidden - j0 < block ? hidden - j0 : block;
          const $T* restrict panel = weight + blk * hidden * 3 * block;
          for (int64_t b = 0; b < batch; b += b < whole ? rows : 1) {
            const $T* restrict x = data + (t * batch + b) * 3 * hidden + j0;
            $T* restrict yo = y + t * row + b * hidden + j0;
            if (b < whole)
              RL_REC_CALL_$S(rl_gru_rows_$S, RL_REC_ROWS_$S, x, panel, hp + b * hidden, bias,
                             h_n + b * hidden, yo, hidden, j0, n, linear_before_reset,
                             half);
            else
              RL_REC_CALL_$S(rl_gru_rows_$S, 1, x, panel, hp + b * hidden, bias,
                             h_n + b * hidden, yo, hidden, j0, n, linear_before_reset,
                             half);
          }
        }
      }
      rl_team_barrier();
    }
  }
  memcpy(h_n, seq ? y + (reverse ? 0 : seq - 1) * row : h0, (size_t)row * sizeof($T));
  return 0;
}
""")

_RNN = Template(r"""
static inline __attribute__((always_inline)) void rl_rnn_block_$S(
    const $T* restrict x, const $T* restrict panel, const $T* restrict h,
    $T* restrict y, int64_t hidden, int64_t n, int64_t relu, int rows, int block) {
  $T acc[RL_REC_MAX_ROWS_$S * $MAX_BLOCK];
  rl_rec_load_$S(acc, x, hidden, hidden, rows, 1, 0, 1, block, n);
  rl_rec_panel_$S(acc, panel, h, rows, hidden, 1, 0, 1, block);
  for (int r = 0; r < rows; ++r) {
    const $T* restrict a = acc + r * block;
    $T* restrict yr = y + r * hidden;
    if (relu) {
      #pragma omp simd
      for (int64_t v = 0; v < n; ++v) yr[v] = rl_max_$S(a[v], ($T)0);  /* keeps NaN */
    } else {
      #pragma omp simd
      for (int64_t v = 0; v < n; ++v) yr[v] = rl_tanh_$S(a[v]);
    }
  }
}

/* nn.rnn_sequence: data (seq, batch, H) = the input projection, weight packed
   (blocks, H, 1, block); h = tanh or relu of data[t] + h W. */
int32_t rl_rnn_sequence_$S(const $T* restrict data, const $T* restrict h0,
                           const $T* restrict weight, $T* restrict y, $T* restrict h_n,
                           int64_t seq, int64_t batch, int64_t hidden, int64_t block,
                           int64_t reverse, int64_t relu, int64_t min_work) {
  const int64_t blocks = (hidden + block - 1) / block, row = batch * hidden;
  const int64_t rows = RL_REC_ROWS_$S, whole = batch - batch % rows;
  const int team = rl_team(batch * hidden * hidden, min_work, blocks);
  #pragma omp parallel num_threads(team) if(team > 1)
  {
    rl_team_arrive();
    const int64_t nt = rl_team_size(), tid = rl_thread_num();
    const int64_t lo = blocks * tid / nt, hi = blocks * (tid + 1) / nt;
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t t = reverse ? seq - 1 - s : s;
      const $T* restrict hp = s == 0 ? h0 : y + (reverse ? t + 1 : t - 1) * row;
      for (int64_t blk = lo; blk < hi; ++blk) {
        const int64_t j0 = blk * block, n = hidden - j0 < block ? hidden - j0 : block;
        const $T* restrict panel = weight + blk * hidden * block;
        for (int64_t b = 0; b < batch; b += b < whole ? rows : 1) {
          const $T* restrict x = data + (t * batch + b) * hidden + j0;
          $T* restrict yo = y + t * row + b * hidden + j0;
          if (b < whole)
            RL_REC_CALL_$S(rl_rnn_block_$S, RL_REC_ROWS_$S, x, panel, hp + b * hidden, yo,
                           hidden, n, relu);
          else
            RL_REC_CALL_$S(rl_rnn_block_$S, 1, x, panel, hp + b * hidden, yo, hidden, n,
                           relu);
        }
      }
      rl_team_barrier();
    }
  }
  memcpy(h_n, seq ? y + (reverse ? 0 : seq - 1) * row : h0, (size_t)row * sizeof($T));
  return 0;
}
""")

_TYPES = {  # suffix: (C type, exp, tanh, batch rows at once with 512 / 256-bit vectors)
    "f32": ("float", "rl_expf", "rl_tanhf", 4, 2),
    "f64": ("double", "exp", "tanh", 2, 1),
}


def routine_name(cell: str, dtype: str) -> str:
    """The C routine of ``cell`` (``lstm``, ``gru``, ``rnn``) for ``dtype``."""
    return f"rl_{cell}_sequence_{'f64' if dtype == 'float64' else 'f32'}"


def routines() -> dict[str, tuple[str, tuple[str, ...]]]:
    """``{name: (C source, required routine names)}`` for the codegen routine table."""
    out = {}
    for suffix, (ctype, exp, tanh, rows512, rows256) in _TYPES.items():
        subst = {"T": ctype, "S": suffix, "EXP": exp, "TANH": tanh, "MAX_BLOCK": MAX_BLOCK,
                 "ROWS512": rows512, "ROWS256": rows256}
        helpers = f"rl_recurrent_helpers_{suffix}"
        out[helpers] = (_HELPERS.substitute(subst), ())
        for cell, text in (("lstm", _LSTM), ("gru", _GRU), ("rnn", _RNN)):
            out[f"rl_{cell}_sequence_{suffix}"] = (text.substitute(subst), (helpers,))
    return out
