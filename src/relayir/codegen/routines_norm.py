"""C routines of the row normalisations: ``nn.softmax``, ``nn.log_softmax``,
``nn.layer_norm`` (float32 and float64; other dtypes keep their tensor-expression
computes).

The tensor is viewed as ``(outer, n, inner)`` with ``n`` the normalised axis. One
parallel loop over rows (``inner == 1``: contiguous rows) or over ``(outer, chunk of
inner positions)`` (vectorised across the positions); each row is read from memory once
and swept again while it is in cache, with no temporaries and one thread team per call
(the tensor-expression versions make three or four stages, each a parallel loop with
its statistics in memory).

Numerics are the references' (``op/nn/activation.py``, ``op/nn/norm.py``) step by step:
softmax subtracts the row maximum (``rl_max_*``, numpy's NaN rule), sums in double and
scales by the sum's reciprocal (within an ulp of dividing); layer_norm takes the mean,
then the mean squared deviation (two sweeps, in double), then ``(x - mean) / sqrt(var +
eps) * gamma + beta`` in double. A NaN or inf in a row gives NaN where the reference
does.
"""

from __future__ import annotations

from string import Template

CHUNK = 16  # inner positions swept together when the normalised axis is not the last

_SOFTMAX = Template(r"""
/* softmax (log_softmax) of one contiguous row of n. */
static inline void rl_softmax_row_$S(const $T* restrict xr, $T* restrict yr, int64_t n,
                                     int64_t log_softmax) {
  $T lane[$CHUNK];
  for (int v = 0; v < $CHUNK; ++v) lane[v] = -($T)INFINITY;
  int64_t k = 0;
  for (; k + $CHUNK <= n; k += $CHUNK) {
    #pragma omp simd
    for (int v = 0; v < $CHUNK; ++v) lane[v] = rl_max_$S(lane[v], xr[k + v]);
  }
  $T m = -($T)INFINITY;
  for (int v = 0; v < $CHUNK; ++v) m = rl_max_$S(m, lane[v]);
  for (; k < n; ++k) m = rl_max_$S(m, xr[k]);
  double s = 0;
  if (log_softmax) {
    #pragma omp simd reduction(+:s)
    for (int64_t j = 0; j < n; ++j) s += (double)$EXP(xr[j] - m);
    const $T ls = ($T)log(s);
    #pragma omp simd
    for (int64_t j = 0; j < n; ++j) yr[j] = xr[j] - m - ls;
    return;
  }
  #pragma omp simd reduction(+:s)
  for (int64_t j = 0; j < n; ++j) {
    const $T e = $EXP(xr[j] - m);
    yr[j] = e;
    s += (double)e;
  }
  const $T inv = ($T)(1.0 / s);  /* within an ulp of dividing by s, and vectorises */
  #pragma omp simd
  for (int64_t j = 0; j < n; ++j) yr[j] *= inv;
}

/* The same for w (<= $CHUNK) adjacent positions of rows strided by `inner`. */
static inline void rl_softmax_cols_$S(const $T* restrict xr, $T* restrict yr, int64_t n,
                                      int64_t inner, int64_t w, int64_t log_softmax) {
  $T m[$CHUNK];
  double s[$CHUNK];
  for (int64_t v = 0; v < w; ++v) { m[v] = -($T)INFINITY; s[v] = 0; }
  for (int64_t k = 0; k < n; ++k)
    for (int64_t v = 0; v < w; ++v) m[v] = rl_max_$S(m[v], xr[k * inner + v]);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t v = 0; v < w; ++v) {
      const $T e = $EXP(xr[k * inner + v] - m[v]);
      if (!log_softmax) yr[k * inner + v] = e;
      s[v] += (double)e;
    }
  for (int64_t k = 0; k < n; ++k)
    for (int64_t v = 0; v < w; ++v)
      yr[k * inner + v] = log_softmax ? xr[k * inner + v] - m[v] - ($T)log(s[v])
                                      : ($T)((double)yr[k * inner + v] / s[v]);
}

/* softmax (log_softmax) of x (outer, n, inner) along n: rows, or chunks of columns. */
int32_t rl_softmax_$S(const $T* restrict x, $T* restrict out, int64_t outer, int64_t n,
                      int64_t inner, int64_t log_softmax, int64_t min_work) {
  const int64_t chunks = (inner + $CHUNK - 1) / $CHUNK;
  const int team = rl_team(outer * n * inner, min_work, outer * chunks);
  #pragma omp parallel num_threads(team) if(team > 1)
  {
    rl_team_arrive();
    #pragma omp for schedule(static) nowait
    for (int64_t oc = 0; oc < outer * chunks; ++oc) {
      const int64_t o = oc / chunks, i0 = (oc % chunks) * $CHUNK;
      const int64_t at = o * n * inner + i0;
      if (inner == 1)
        rl_softmax_row_$S(x + at, out + at, n, log_softmax);
      else
        rl_softmax_cols_$S(x + at, out + at, n, inner,
                           inner - i0 < $CHUNK ? inner - i0 : $CHUNK, log_softmax);
    }
  }
  return 0;
}
""")

_LAYER_NORM = Template(r"""
/* layer_norm of w (<= $CHUNK) adjacent positions of rows of n strided by `inner` (a
   contiguous row: inner = w = 1): mean, then mean squared deviation, then the output. */
static inline __attribute__((always_inline)) void rl_layer_norm_cols_$S(
    const $T* restrict xr, const $T* restrict gamma, const $T* restrict beta,
    $T* restrict yr, int64_t n, int64_t inner, int64_t w, double eps, int64_t scale,
    int64_t center) {
  double mean[$CHUNK], rstd[$CHUNK];
  for (int64_t v = 0; v < w; ++v) {
    double s = 0;
    #pragma omp simd reduction(+:s)
    for (int64_t k = 0; k < n; ++k) s += (double)xr[k * inner + v];
    mean[v] = s / (double)n;
    double q = 0;
    #pragma omp simd reduction(+:q)
    for (int64_t k = 0; k < n; ++k) {
      const double d = (double)xr[k * inner + v] - mean[v];
      q += d * d;
    }
    rstd[v] = 1.0 / sqrt(q / (double)n + eps);
  }
  for (int64_t v = 0; v < w; ++v) {
    #pragma omp simd
    for (int64_t k = 0; k < n; ++k) {
      double y = ((double)xr[k * inner + v] - mean[v]) * rstd[v];
      y = scale ? y * (double)gamma[k] : y;
      yr[k * inner + v] = ($T)(center ? y + (double)beta[k] : y);
    }
  }
}

/* layer_norm of x (outer, n, inner) along n: gamma and beta (n) when scale / center. */
RL_VRP int32_t rl_layer_norm_$S(const $T* restrict x, const $T* restrict gamma,
                                const $T* restrict beta, $T* restrict out, int64_t outer,
                                int64_t n, int64_t inner, double eps, int64_t scale,
                                int64_t center, int64_t min_work) {
  const int64_t chunks = (inner + $CHUNK - 1) / $CHUNK;
  const int team = rl_team(outer * n * inner, min_work, outer * chunks);
  #pragma omp parallel num_threads(team) if(team > 1)
  {
    rl_team_arrive();
    #pragma omp for schedule(static) nowait
    for (int64_t oc = 0; oc < outer * chunks; ++oc) {
      const int64_t o = oc / chunks, i0 = (oc % chunks) * $CHUNK;
      const int64_t at = o * n * inner + i0;
      if (inner == 1)  /* a contiguous row: the constant strides vectorise it */
        rl_layer_norm_cols_$S(x + at, gamma, beta, out + at, n, 1, 1, eps, scale, center);
      else
        rl_layer_norm_cols_$S(x + at, gamma, beta, out + at, n, inner,
                              inner - i0 < $CHUNK ? inner - i0 : $CHUNK, eps, scale, center);
    }
  }
  return 0;
}
""")

_TYPES = {"f32": ("float", "rl_expf"), "f64": ("double", "exp")}


def routines() -> dict[str, tuple[str, tuple[str, ...]]]:
    """``{name: (C source, required routine names)}`` for the codegen routine table."""
    out = {}
    for suffix, (ctype, exp) in _TYPES.items():
        subst = {"T": ctype, "S": suffix, "EXP": exp, "CHUNK": CHUNK}
        out[f"rl_softmax_{suffix}"] = (_SOFTMAX.substitute(subst), ())
        out[f"rl_layer_norm_{suffix}"] = (_LAYER_NORM.substitute(subst), ())
    return out
