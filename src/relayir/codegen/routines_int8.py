"""The C routine of the 8-bit matrix product ``qnn.contrib_dense_packed``:
``C[M][N] (int32) = A[M][K] (uint8) x B[N][K] (int8)``, exact.

``B`` comes packed at build time (``op/qnn/packed.py``): blocks of 16 columns, and in a
block groups of 4 consecutive ``k`` per column, ``[N/16][K/4][16][4]`` (zero padded),
the operand layout of ``vpdpbusd``. The instruction set is the one the kernel is
compiled for (``-march=native``, as for the float micro-kernels), chosen by the
compiler's macros:

- AVX512-VNNI: a 6-row x 32-column register tile, one ``vpdpbusd`` per 4 ``k`` per
  16 columns (u8 x s8 products summed in int32: exact, no int16 saturation);
- AVX-VNNI (256-bit ``vpdpbusd``) and AVX2 (``vpmaddwd`` on zero / sign-extended
  16-bit values, exact, where ``vpmaddubsw`` would saturate): the same tile in halves;
- elsewhere (or ``-DRL_SCALAR_MICROKERNELS``): the same loops in scalars.

Row tiles x column panels are shared by one OpenMP team (``rl_team``).
"""

from __future__ import annotations

QGEMM = r"""
#if !defined(RL_SCALAR_MICROKERNELS) && (defined(__AVX512VNNI__) && defined(__AVX512BW__) \
    || defined(__AVXVNNI__) || defined(__AVX2__))
#include <immintrin.h>
#endif
enum { RL_QMR = 6, RL_QNB = 2 };  /* rows and 16-column blocks of one register tile */

/* One 4-k group of row r of A (zero past K), as the int32 that vpdpbusd broadcasts. */
static inline int32_t rl_qgroup(const uint8_t* restrict ar, int64_t kg, int64_t K) {
  int32_t v = 0;
  if (4 * kg + 4 <= K) { memcpy(&v, ar + 4 * kg, 4); return v; }
  uint8_t t[4] = {0, 0, 0, 0};
  for (int64_t k = 4 * kg; k < K; ++k) t[k - 4 * kg] = ar[k];
  memcpy(&v, t, 4);
  return v;
}

/* C rows [0, rows) x columns [n0, n0 + 16 * nb) of one tile; `nvalid`: columns < N. */
static inline __attribute__((always_inline)) void rl_qgemm_tile(
    const uint8_t* restrict a, int64_t K, const int8_t* restrict bp, int64_t k4,
    int32_t* restrict c, int64_t ldc, int rows, int nb, int64_t nvalid) {
  const uint8_t* ar[RL_QMR];
  for (int i = 0; i < RL_QMR; ++i) ar[i] = a + (i < rows ? i : rows - 1) * K;
  const int64_t kfull = K / 4;
#if !defined(RL_SCALAR_MICROKERNELS) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
  __m512i acc[RL_QMR][RL_QNB];
  for (int i = 0; i < RL_QMR; ++i)
    for (int v = 0; v < RL_QNB; ++v) acc[i][v] = _mm512_setzero_si512();
  const int8_t* b1 = bp + (nb > 1 ? k4 * 64 : 0);
  for (int64_t kg = 0; kg < k4; ++kg) {
    const __m512i w0 = _mm512_loadu_si512((const void*)(bp + kg * 64));
    const __m512i w1 = _mm512_loadu_si512((const void*)(b1 + kg * 64));
    #pragma GCC unroll 6
    for (int i = 0; i < RL_QMR; ++i) {
      int32_t g;
      if (kg < kfull) memcpy(&g, ar[i] + 4 * kg, 4); else g = rl_qgroup(ar[i], kg, K);
      const __m512i x = _mm512_set1_epi32(g);
      acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], x, w0);
      acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], x, w1);
    }
  }
  for (int i = 0; i < rows; ++i)
    for (int v = 0; v < nb; ++v) {
      const int64_t left = nvalid - 16 * v;
      if (left <= 0) break;
      const __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
      _mm512_mask_storeu_epi32(c + i * ldc + 16 * v, m, acc[i][v]);
    }
#elif !defined(RL_SCALAR_MICROKERNELS) && (defined(__AVXVNNI__) || defined(__AVX2__))
  __m256i acc[RL_QMR][2 * RL_QNB];
  for (int i = 0; i < RL_QMR; ++i)
    for (int v = 0; v < 2 * RL_QNB; ++v) acc[i][v] = _mm256_setzero_si256();
  const int8_t* b1 = bp + (nb > 1 ? k4 * 64 : 0);
  for (int64_t kg = 0; kg < k4; ++kg) {
    __m256i w[4];
    w[0] = _mm256_loadu_si256((const __m256i*)(bp + kg * 64));
    w[1] = _mm256_loadu_si256((const __m256i*)(bp + kg * 64 + 32));
    w[2] = _mm256_loadu_si256((const __m256i*)(b1 + kg * 64));
    w[3] = _mm256_loadu_si256((const __m256i*)(b1 + kg * 64 + 32));
#if !defined(__AVXVNNI__)
    /* AVX2: the weights as 16-bit pairs (k0 k1 | k2 k3 per column), vpmaddwd twice */
    __m256i lo[4], hi[4];
    for (int v = 0; v < 4; ++v) {
      const __m256i even = _mm256_srai_epi16(_mm256_slli_epi16(w[v], 8), 8);
      const __m256i odd = _mm256_srai_epi16(w[v], 8);
      lo[v] = even;  /* k0, k2 */
      hi[v] = odd;   /* k1, k3 */
    }
#endif
    #pragma GCC unroll 6
    for (int i = 0; i < RL_QMR; ++i) {
      int32_t g;
      if (kg < kfull) memcpy(&g, ar[i] + 4 * kg, 4); else g = rl_qgroup(ar[i], kg, K);
#if defined(__AVXVNNI__)
      const __m256i x = _mm256_set1_epi32(g);
      for (int v = 0; v < 4; ++v) acc[i][v] = _mm256_dpbusd_avx_epi32(acc[i][v], x, w[v]);
#else
      const uint32_t u = (uint32_t)g;
      const __m256i xe = _mm256_set1_epi32((int32_t)((u & 0xFF) | ((u >> 16 & 0xFF) << 16)));
      const __m256i xo = _mm256_set1_epi32((int32_t)((u >> 8 & 0xFF) | ((u >> 24) << 16)));
      for (int v = 0; v < 4; ++v)
        acc[i][v] = _mm256_add_epi32(acc[i][v], _mm256_add_epi32(
            _mm256_madd_epi16(xe, lo[v]), _mm256_madd_epi16(xo, hi[v])));
#endif
    }
  }
  for (int i = 0; i < rows; ++i)
    for (int v = 0; v < 2 * nb; ++v) {
      const int64_t left = nvalid - 8 * v;
      if (left <= 0) break;
      if (left >= 8) {
        _mm256_storeu_si256((__m256i*)(c + i * ldc + 8 * v), acc[i][v]);
      } else {
        int32_t t[8];
        _mm256_storeu_si256((__m256i*)t, acc[i][v]);
        for (int64_t j = 0; j < left; ++j) c[i * ldc + 8 * v + j] = t[j];
      }
    }
#else
  for (int i = 0; i < rows; ++i)
    for (int v = 0; v < nb; ++v)
      for (int j = 0; j < 16 && 16 * v + j < nvalid; ++j) {
        const int8_t* bcol = bp + v * k4 * 64 + 4 * j;
        int32_t s = 0;
        for (int64_t k = 0; k < K; ++k) s += (int32_t)ar[i][k] * bcol[(k / 4) * 64 + k % 4];
        c[i * ldc + 16 * v + j] = s;
      }
#endif
}

/* C (M, N) int32 = A (M, K) uint8 x B^T, B packed as [ceil(N/16)][ceil(K/4)][16][4]. */
int32_t rl_qgemm_u8s8(const uint8_t* restrict a, const int8_t* restrict bp,
                      int32_t* restrict c, int64_t M, int64_t N, int64_t K,
                      int64_t min_work) {
  const int64_t k4 = (K + 3) / 4, nblocks = (N + 15) / 16;
  const int64_t panels = (nblocks + RL_QNB - 1) / RL_QNB, tiles = (M + RL_QMR - 1) / RL_QMR;
  const int team = rl_team(M * N * K, min_work, tiles * panels);
  #pragma omp parallel num_threads(team) if(team > 1)
  {
    rl_team_arrive();
    #pragma omp for schedule(static) nowait
    for (int64_t t = 0; t < tiles * panels; ++t) {
      const int64_t m0 = (t / panels) * RL_QMR, p = t % panels;
      const int64_t n0 = p * RL_QNB * 16;
      const int rows = (int)(M - m0 < RL_QMR ? M - m0 : RL_QMR);
      const int nb = (int)(nblocks - p * RL_QNB < RL_QNB ? nblocks - p * RL_QNB : RL_QNB);
      rl_qgemm_tile(a + m0 * K, K, bp + p * RL_QNB * k4 * 64, k4, c + m0 * N + n0, N, rows,
                    nb, N - n0);
    }
  }
  return 0;
}
"""


def routines() -> dict[str, tuple[str, tuple[str, ...]]]:
    """``{name: (C source, required routine names)}`` for the codegen routine table."""
    return {"rl_qgemm_u8s8": (QGEMM, ())}
