"""The C routines of the 8-bit products ``qnn.contrib_dense_packed`` (``C[M][N] (int32) =
A[M][K] (uint8) x B[N][K] (int8)``) and ``qnn.contrib_conv2d_packed`` (the same product
over the taps of each output pixel), exact; and ``qnn.contrib_depthwise_conv2d`` (one
channel per group). The convolutions take NCHW data (copied to a padded NHWC buffer,
output staged back to NCHW) or NHWC data (read in place where no padding is needed,
output stored as the tiles come); the ``_rq`` entries (``*_requant`` ops, NHWC) apply
the requantize to each tile in registers and store uint8.

``B`` comes packed at build time (``op/qnn/packed.py``): blocks of 16 columns, and in a
block groups of 4 consecutive ``k`` per column, ``[N/16][K/4][16][4]`` (zero padded),
the operand layout of ``vpdpbusd``. The instruction set is the one the kernel is
compiled for (the target's ``-march``, as for the float micro-kernels), chosen by the
compiler's macros (``tir.machine.Machine.int8`` names the same choice):

- AVX512-VNNI: a 6-row x 32-column register tile, one ``vpdpbusd`` per 4 ``k`` per
  16 columns (u8 x s8 products summed in int32: exact, no int16 saturation);
- AVX-VNNI (256-bit ``vpdpbusd``) and AVX2 (``vpmaddwd`` on zero / sign-extended
  16-bit values, exact, where ``vpmaddubsw`` would saturate): the same tile in halves;
- elsewhere (or ``-DRL_SCALAR_MICROKERNELS``): the same loops in scalars.

Row tiles x column panels are shared by one OpenMP team (``rl_team``).
"""

from __future__ import annotations

REQUANT = r"""
#if !defined(RL_SCALAR_MICROKERNELS) && defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>
#endif
/* The requantize a tile gets before it is stored, when its layer has one (the
   *_requant ops): uint8(int32(rint(clip(float(acc + bias[j]) * scale[j], lo, hi))) + zp)
   for column j, in the order and the float32 arithmetic of the unfused ops. */
typedef struct { const int32_t* bias; const float* scale; float lo, hi; int32_t zp; } rl_qrq;

static inline uint8_t rl_qrq_one(const rl_qrq* rq, int32_t acc, int64_t j) {
  float f = (float)(int32_t)((uint32_t)acc + (uint32_t)rq->bias[j]) * rq->scale[j];
  if (f != f) return (uint8_t)rq->zp;  /* a NaN scale: the float-to-int cast's 0 */
  f = f < rq->hi ? f : rq->hi;
  f = f > rq->lo ? f : rq->lo;
  return (uint8_t)((int32_t)rintf(f) + rq->zp);
}

#if !defined(RL_SCALAR_MICROKERNELS) && defined(__AVX512F__) && defined(__AVX512BW__)
/* 16 columns of rl_qrq_one: vcvtps2dq rounds half to even (the default MXCSR), as rintf */
static inline __attribute__((always_inline)) void rl_qrq_store16(
    const rl_qrq* rq, __m512i acc, int64_t j, __mmask16 m, uint8_t* dst) {
  const __m512i s = _mm512_add_epi32(acc, _mm512_maskz_loadu_epi32(m, rq->bias + j));
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(s), _mm512_maskz_loadu_ps(m, rq->scale + j));
  const __mmask16 nan = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);  /* a NaN scale: 0, + zp */
  f = _mm512_max_ps(_mm512_min_ps(f, _mm512_set1_ps(rq->hi)), _mm512_set1_ps(rq->lo));
  const __m512i r = _mm512_maskz_mov_epi32((__mmask16)~nan, _mm512_cvtps_epi32(f));
  const __m512i q = _mm512_add_epi32(r, _mm512_set1_epi32(rq->zp));
  _mm_mask_storeu_epi8((void*)dst, m, _mm512_cvtepi32_epi8(q));
}
#endif
"""

QGEMM = r"""
#if !defined(RL_SCALAR_MICROKERNELS) && (defined(__AVX512VNNI__) && defined(__AVX512BW__) \
    || defined(__AVXVNNI__) || defined(__AVX2__))
#include <immintrin.h>
#endif
enum { RL_QMR = 6, RL_QNB = 2 };  /* rows and 16-column blocks of one register tile
                                     (the AVX-512 loop names its 6 rows) */
enum { RL_QSUB = 8 };  /* register tiles of rows per output staging block (convolution) */

/* The 4-byte group at p as the int32 that vpdpbusd broadcasts; `n` < 4 valid bytes are
   zero filled (a dense row's tail). */
static inline int32_t rl_qgroup(const uint8_t* restrict p, int64_t n) {
  int32_t v = 0;
  if (n >= 4) { memcpy(&v, p, 4); return v; }
  uint8_t t[4] = {0, 0, 0, 0};
  for (int64_t k = 0; k < n; ++k) t[k] = p[k];
  memcpy(&v, t, 4);
  return v;
}

/* One register tile: rows ar[0..rows) (each read at ar[i] + seg[s] + 4 g for segment s <
   nseg and group g < gps, the last group cut at `tail` bytes when nseg is 1) times the
   column blocks bp (nb of them, k4 groups each), stored at c + i * ldm + j * ldn for the
   columns j < nvalid. A dense row is one segment; a convolution row one per tap. With
   `rq` (its columns from this tile's first), the tile is requantized and stored as
   uint8 at c8 + i * ldm + j instead (ldn is then 1). */
static inline __attribute__((always_inline)) void rl_qtile(
    const uint8_t* const* ar, const int64_t* seg, int64_t nseg, int64_t gps, int64_t tail,
    const int8_t* restrict bp, int64_t k4, int32_t* restrict c, int64_t ldm, int64_t ldn,
    int rows, int nb, int64_t nvalid, const rl_qrq* rq, uint8_t* restrict c8) {
  const int8_t* b1 = bp + (nb > 1 ? k4 * 64 : 0);
  int32_t out[RL_QMR][RL_QNB * 16];
#if !defined(RL_SCALAR_MICROKERNELS) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
  __m512i acc[RL_QMR][RL_QNB];
  for (int i = 0; i < RL_QMR; ++i)
    for (int v = 0; v < RL_QNB; ++v) acc[i][v] = _mm512_setzero_si512();
  const int64_t gfull = tail / 4 < gps ? tail / 4 : gps;  /* groups with 4 valid bytes */
  for (int64_t s = 0; s < nseg; ++s) {
    const int64_t off = seg[s], kg0 = s * gps;
    const uint8_t* r0 = ar[0] + off; const uint8_t* r1 = ar[1] + off;
    const uint8_t* r2 = ar[2] + off; const uint8_t* r3 = ar[3] + off;
    const uint8_t* r4 = ar[4] + off; const uint8_t* r5 = ar[5] + off;
    const int8_t* q0 = bp + kg0 * 64;
    const int8_t* q1 = b1 + kg0 * 64;
    for (int64_t g = 0; g < gfull; ++g) {  /* no branch: the rows in registers */
      const __m512i w0 = _mm512_loadu_si512((const void*)(q0 + g * 64));
      const __m512i w1 = _mm512_loadu_si512((const void*)(q1 + g * 64));
#define RL_QROW(i, r) { int32_t x; memcpy(&x, r + 4 * g, 4); \
        const __m512i xv = _mm512_set1_epi32(x); \
        acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], xv, w0); \
        acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], xv, w1); }
      RL_QROW(0, r0) RL_QROW(1, r1) RL_QROW(2, r2) RL_QROW(3, r3) RL_QROW(4, r4) RL_QROW(5, r5)
#undef RL_QROW
    }
    for (int64_t g = gfull; g < gps; ++g) {  /* a dense row's last, partial group */
      const __m512i w0 = _mm512_loadu_si512((const void*)(q0 + g * 64));
      const __m512i w1 = _mm512_loadu_si512((const void*)(q1 + g * 64));
      for (int i = 0; i < RL_QMR; ++i) {
        const __m512i xv = _mm512_set1_epi32(rl_qgroup(ar[i] + off + 4 * g, tail - 4 * g));
        acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], xv, w0);
        acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], xv, w1);
      }
    }
  }
  if (ldn == 1) {
    for (int i = 0; i < rows; ++i)
      for (int v = 0; v < nb; ++v) {
        const int64_t left = nvalid - 16 * v;
        if (left <= 0) break;
        const __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
        if (rq) rl_qrq_store16(rq, acc[i][v], 16 * v, m, c8 + i * ldm + 16 * v);
        else _mm512_mask_storeu_epi32(c + i * ldm + 16 * v, m, acc[i][v]);
      }
    return;
  }
  if (ldm == 1 && ldn < (1 << 26)) {  /* columns strided (NCHW output): one scatter per row */
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i idx = _mm512_mullo_epi32(lanes, _mm512_set1_epi32((int32_t)ldn));
    for (int v = 0; v < nb; ++v) {
      const int64_t left = nvalid - 16 * v;
      if (left <= 0) break;
      const __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
      for (int i = 0; i < rows; ++i)
        _mm512_mask_i32scatter_epi32((void*)(c + i + 16 * v * ldn), m, idx, acc[i][v], 4);
    }
    return;
  }
  for (int i = 0; i < rows; ++i)
    for (int v = 0; v < nb; ++v) _mm512_storeu_si512((void*)(out[i] + 16 * v), acc[i][v]);
#elif !defined(RL_SCALAR_MICROKERNELS) && (defined(__AVXVNNI__) || defined(__AVX2__))
  __m256i acc[RL_QMR][2 * RL_QNB];
  for (int i = 0; i < RL_QMR; ++i)
    for (int v = 0; v < 2 * RL_QNB; ++v) acc[i][v] = _mm256_setzero_si256();
  for (int64_t s = 0; s < nseg; ++s) {
    const int64_t off = seg[s], kg0 = s * gps;
    for (int64_t g = 0; g < gps; ++g) {
      const int8_t* q0 = bp + (kg0 + g) * 64;
      const int8_t* q1 = b1 + (kg0 + g) * 64;
      __m256i w[4];
      w[0] = _mm256_loadu_si256((const __m256i*)q0);
      w[1] = _mm256_loadu_si256((const __m256i*)(q0 + 32));
      w[2] = _mm256_loadu_si256((const __m256i*)q1);
      w[3] = _mm256_loadu_si256((const __m256i*)(q1 + 32));
#if !defined(__AVXVNNI__)
      /* AVX2: each column's 4 weights as 16-bit pairs (k0, k2) and (k1, k3) for
         vpmaddwd, exact where vpmaddubsw would saturate */
      __m256i lo[4], hi[4];
      for (int v = 0; v < 4; ++v) {
        lo[v] = _mm256_srai_epi16(_mm256_slli_epi16(w[v], 8), 8);
        hi[v] = _mm256_srai_epi16(w[v], 8);
      }
#endif
      const int64_t valid = tail - 4 * g;
      #pragma GCC unroll 6
      for (int i = 0; i < RL_QMR; ++i) {
        const uint8_t* p = ar[i] + off + 4 * g;
        int32_t x;
        if (valid >= 4) memcpy(&x, p, 4); else x = rl_qgroup(p, valid);
#if defined(__AVXVNNI__)
        const __m256i xv = _mm256_set1_epi32(x);
        for (int v = 0; v < 4; ++v) acc[i][v] = _mm256_dpbusd_avx_epi32(acc[i][v], xv, w[v]);
#else
        const uint32_t u = (uint32_t)x;
        const __m256i xe = _mm256_set1_epi32((int32_t)((u & 0xFF) | ((u >> 16 & 0xFF) << 16)));
        const __m256i xo = _mm256_set1_epi32((int32_t)((u >> 8 & 0xFF) | ((u >> 24) << 16)));
        for (int v = 0; v < 4; ++v)
          acc[i][v] = _mm256_add_epi32(acc[i][v], _mm256_add_epi32(
              _mm256_madd_epi16(xe, lo[v]), _mm256_madd_epi16(xo, hi[v])));
#endif
      }
    }
  }
  for (int i = 0; i < rows; ++i)
    for (int v = 0; v < 2 * nb; ++v) _mm256_storeu_si256((__m256i*)(out[i] + 8 * v), acc[i][v]);
#else
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < 16 * nb; ++j) {
      const int8_t* bcol = (j < 16 ? bp : b1) + 4 * (j % 16);
      int32_t sum = 0;
      for (int64_t s = 0; s < nseg; ++s)
        for (int64_t g = 0; g < gps; ++g)
          for (int64_t e = 0; e < 4 && 4 * g + e < tail; ++e)
            sum += (int32_t)ar[i][seg[s] + 4 * g + e] * bcol[(s * gps + g) * 64 + e];
      out[i][j] = sum;
    }
#endif
  if (rq) {
    for (int i = 0; i < rows; ++i)
      for (int64_t j = 0; j < 16 * nb && j < nvalid; ++j)
        c8[i * ldm + j] = rl_qrq_one(rq, out[i][j], j);
    return;
  }
  for (int i = 0; i < rows; ++i)
    for (int64_t j = 0; j < 16 * nb && j < nvalid; ++j) c[i * ldm + j * ldn] = out[i][j];
}

/* C (M, N) int32 = A (M, K) uint8 x B^T, B packed as [ceil(N/16)][ceil(K/4)][16][4]. */
int32_t rl_qgemm_u8s8(const uint8_t* restrict a, const int8_t* restrict bp,
                      int32_t* restrict c, int64_t M, int64_t N, int64_t K,
                      int64_t min_work) {
  const int64_t k4 = (K + 3) / 4, nblocks = (N + 15) / 16;
  const int64_t panels = (nblocks + RL_QNB - 1) / RL_QNB, tiles = (M + RL_QMR - 1) / RL_QMR;
  const int team = rl_team(M * N * K, min_work, tiles * panels);
  const int64_t seg0 = 0;
  #pragma omp parallel num_threads(team) if(team > 1)
  {
    rl_team_arrive();
    #pragma omp for schedule(static) nowait
    for (int64_t t = 0; t < tiles * panels; ++t) {
      const int64_t m0 = (t / panels) * RL_QMR, p = t % panels, n0 = p * RL_QNB * 16;
      const int rows = (int)(M - m0 < RL_QMR ? M - m0 : RL_QMR);
      const int nb = (int)(nblocks - p * RL_QNB < RL_QNB ? nblocks - p * RL_QNB : RL_QNB);
      const uint8_t* ar[RL_QMR];
      for (int i = 0; i < RL_QMR; ++i) ar[i] = a + (m0 + (i < rows ? i : rows - 1)) * K;
      rl_qtile(ar, &seg0, 1, k4, K, bp + p * RL_QNB * k4 * 64, k4, c + m0 * N + n0, N, 1,
               rows, nb, N - n0, NULL, NULL);
    }
  }
  return 0;
}

/* out (N, O, OH, OW) int32 = conv2d of x (N, C, H, W) uint8, padded with pad_value,
   and the weight packed as [ceil(O/16)][KH * KW * C4 / 4][16][4] (taps (kh, kw) outer,
   channels padded to C4 = 4 ceil(C/4) inner). The input is copied once per call to a
   padded NHWC buffer, so that each tap of an output pixel reads C4 contiguous bytes:
   an im2col that is never written out. */
static int32_t rl_qconv2d(const uint8_t* restrict x, const int8_t* restrict bp,
                          int32_t* restrict out, int64_t N, int64_t C, int64_t H, int64_t W,
                          int64_t O, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                          int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t dh,
                          int64_t dw, int64_t pad_value, int64_t nhwc, int64_t min_work,
                          const rl_qrq* rq, uint8_t* restrict out8) {
  const int64_t C4 = (C + 3) / 4 * 4, gps = C4 / 4, k4 = KH * KW * gps;
  const int64_t Hp = (OH - 1) * sh + (KH - 1) * dh + 1, Wp = (OW - 1) * sw + (KW - 1) * dw + 1;
  const int64_t M = OH * OW, nblocks = (O + 15) / 16;
  const int64_t panels = (nblocks + RL_QNB - 1) / RL_QNB;
  const int64_t supers = (M + RL_QSUB * RL_QMR - 1) / (RL_QSUB * RL_QMR);
  /* NHWC data whose windows stay inside the image, C a multiple of 4, is already what
     the tiles read: no copy (a 1x1 layer reads its input as the GEMM's A) */
  const int direct = nhwc && C4 == C && pt == 0 && pl == 0 && Hp <= H && Wp <= W;
  const int64_t Wr = direct ? W : Wp;  /* pixels per row of what the tiles read */
  uint8_t* buf = direct ? NULL : (uint8_t*)malloc((size_t)(Hp * Wp * C4 + 64));
  int64_t* seg = (int64_t*)malloc((size_t)(KH * KW) * sizeof(int64_t));
  if ((!direct && !buf) || !seg) { free(buf); free(seg); return -1; }
  /* with dw = 1 a window row's KW taps are adjacent pixels, KW * C4 contiguous bytes:
     one segment per window row (7 instead of 49 for a 7x7 stem) */
  const int merged = dw == 1;
  const int64_t nseg = merged ? KH : KH * KW, sgps = merged ? KW * gps : gps;
  for (int64_t i = 0; i < KH; ++i)
    for (int64_t j = 0; j < KW; ++j) seg[i * KW + j] = (i * dh * Wr + j * dw) * C4;
  if (merged)
    for (int64_t i = 0; i < KH; ++i) seg[i] = i * dh * Wr * C4;
  const int team = rl_team(M * O * KH * KW * C, min_work, supers * panels);
  for (int64_t b = 0; b < N; ++b) {
    const uint8_t* xb = x + b * C * H * W;
    const uint8_t* src = direct ? xb : buf;
    int32_t* ob = rq ? NULL : out + b * O * M;
    uint8_t* ob8 = rq ? out8 + b * O * M : NULL;
    #pragma omp parallel num_threads(team) if(team > 1)
    {
      rl_team_arrive();
      #pragma omp for schedule(static) nowait
      for (int64_t r = 0; r < (direct ? 0 : Hp); ++r) {
        uint8_t* row = buf + r * Wp * C4;
        const int64_t h = r - pt;
        const int64_t wn = W < Wp - pl ? W : Wp - pl;  /* input pixels the windows read */
        if (nhwc && C4 == C && h >= 0 && h < H) {  /* the padding, then the row as it is */
          memset(row, (int)pad_value, (size_t)(pl * C4));
          memcpy(row + pl * C4, xb + h * W * C, (size_t)(wn * C));
          memset(row + (pl + wn) * C4, (int)pad_value, (size_t)((Wp - pl - wn) * C4));
          continue;
        }
        if (nhwc) {  /* C4 > C: pixel by pixel, the channels past C zero (whatever the
                        packed kernel holds there); byte loops, not a libc call a pixel */
          const int in_row = h >= 0 && h < H;
          for (int64_t q = 0; q < Wp; ++q) {
            uint8_t* px = row + q * C4;
            const int64_t w = q - pl;
            if (in_row && w >= 0 && w < wn) {
              const uint8_t* src = xb + (h * W + w) * C;
              for (int64_t c = 0; c < C; ++c) px[c] = src[c];
            } else {
              for (int64_t c = 0; c < C; ++c) px[c] = (uint8_t)pad_value;
            }
            for (int64_t c = C; c < C4; ++c) px[c] = 0;
          }
          continue;
        }
        memset(row, (int)pad_value, (size_t)(Wp * C4));
        if (C4 > C)  /* the channels past C are zeros: whatever the packed kernel holds */
          for (int64_t q = 0; q < Wp; ++q)
            for (int64_t c = C; c < C4; ++c) row[q * C4 + c] = 0;
        if (h < 0 || h >= H) continue;
#if !defined(RL_SCALAR_MICROKERNELS) && defined(__AVX512BW__)
        /* 16 pixels x 4 channels at a time: the 4 channel bytes of a pixel are one
           int32 of the NHWC row, scattered at stride C4 */
        const __m512i at = _mm512_mullo_epi32(
            _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
            _mm512_set1_epi32((int32_t)C4));
        for (int64_t c = 0; c < C; c += 4)
          for (int64_t q0 = 0; q0 < wn; q0 += 16) {
            const int64_t n = wn - q0 < 16 ? wn - q0 : 16;
            const __mmask16 m = (__mmask16)(n == 16 ? 0xFFFF : (1u << n) - 1);
            __m512i v = _mm512_setzero_si512();
            for (int k = 0; k < 4 && c + k < C; ++k) {
              const __m128i b = _mm_maskz_loadu_epi8(m, xb + ((c + k) * H + h) * W + q0);
              v = _mm512_or_si512(v, _mm512_slli_epi32(_mm512_cvtepu8_epi32(b), 8 * k));
            }
            _mm512_mask_i32scatter_epi32((void*)(row + (q0 + pl) * C4 + c), m, at, v, 1);
          }
#else
        for (int64_t c = 0; c < C; ++c) {
          const uint8_t* src = xb + (c * H + h) * W;
          for (int64_t w = 0; w < wn; ++w) row[(w + pl) * C4 + c] = src[w];
        }
#endif
      }
      if (!direct) rl_team_barrier();  /* the copy is whole (a partner held up is noticed) */
      if (nhwc) {  /* a pixel's O channels are contiguous: each tile stores in place; the
                      tiles of RL_QSUB row blocks share one weight panel, as below. With
                      few row blocks (a 7x7 output: 2, the second of 1 row) the team
                      splits the panels instead of the rows, so the threads' shares match
                      (and each streams only its part of the weight). */
        const int by_panel = supers < 4 * (int64_t)rl_team_size();
        #pragma omp for schedule(static) nowait
        for (int64_t t = 0; t < supers * panels; ++t) {
          const int64_t sb = by_panel ? t % supers : t / panels;
          const int64_t s0 = sb * RL_QSUB * RL_QMR, p = by_panel ? t / supers : t % panels;
          const int64_t n0 = p * RL_QNB * 16;
          const int nb = (int)(nblocks - p * RL_QNB < RL_QNB ? nblocks - p * RL_QNB : RL_QNB);
          const int64_t end = M < s0 + RL_QSUB * RL_QMR ? M : s0 + RL_QSUB * RL_QMR;
          for (int64_t m0 = s0; m0 < end; m0 += RL_QMR) {
            const int rows = (int)(M - m0 < RL_QMR ? M - m0 : RL_QMR);
            const uint8_t* ar[RL_QMR];
            for (int i = 0; i < RL_QMR; ++i) {
              const int64_t m = m0 + (i < rows ? i : rows - 1), oh = m / OW, ow = m % OW;
              ar[i] = src + (oh * sh * Wr + ow * sw) * C4;
            }
            const rl_qrq cols = rq ? (rl_qrq){rq->bias + n0, rq->scale + n0, rq->lo, rq->hi,
                                              rq->zp} : (rl_qrq){0};
            rl_qtile(ar, seg, nseg, sgps, 4 * sgps, bp + p * RL_QNB * k4 * 64, k4,
                     rq ? NULL : ob + m0 * O + n0, O, 1, rows, nb, O - n0, rq ? &cols : NULL,
                     rq ? ob8 + m0 * O + n0 : NULL);
          }
        }
      } else {
        /* RL_QSUB register tiles of rows share one panel and store through `stage`, so
           that each output channel gets RL_QSUB * RL_QMR contiguous int32 (NCHW) instead of
           a scatter of RL_QMR per tile */
        int32_t stage[RL_QNB * 16][RL_QSUB * RL_QMR];
        #pragma omp for schedule(static) nowait
        for (int64_t t = 0; t < supers * panels; ++t) {
          const int64_t s0 = (t / panels) * RL_QSUB * RL_QMR, p = t % panels, n0 = p * RL_QNB * 16;
          const int nb = (int)(nblocks - p * RL_QNB < RL_QNB ? nblocks - p * RL_QNB : RL_QNB);
          const int64_t span = M - s0 < RL_QSUB * RL_QMR ? M - s0 : RL_QSUB * RL_QMR;
          for (int64_t m0 = s0; m0 < s0 + span; m0 += RL_QMR) {
            const int rows = (int)(M - m0 < RL_QMR ? M - m0 : RL_QMR);
            const uint8_t* ar[RL_QMR];
            for (int i = 0; i < RL_QMR; ++i) {
              const int64_t m = m0 + (i < rows ? i : rows - 1), oh = m / OW, ow = m % OW;
              ar[i] = buf + (oh * sh * Wp + ow * sw) * C4;
            }
            rl_qtile(ar, seg, nseg, sgps, 4 * sgps, bp + p * RL_QNB * k4 * 64, k4,
                     &stage[0][m0 - s0], 1, RL_QSUB * RL_QMR, rows, nb, O - n0, NULL, NULL);
          }
          const int64_t cols = O - n0 < 16 * nb ? O - n0 : 16 * nb;
          for (int64_t j = 0; j < cols; ++j)
            memcpy(ob + (n0 + j) * M + s0, stage[j], (size_t)span * sizeof(int32_t));
        }
      }
    }
  }
  free(buf);
  free(seg);
  return 0;
}

int32_t rl_qconv2d_u8s8(const uint8_t* restrict x, const int8_t* restrict bp,
                        int32_t* restrict out, int64_t N, int64_t C, int64_t H, int64_t W,
                        int64_t O, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                        int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t dh,
                        int64_t dw, int64_t pad_value, int64_t nhwc, int64_t min_work) {
  return rl_qconv2d(x, bp, out, N, C, H, W, O, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw,
                    pad_value, nhwc, min_work, NULL, NULL);
}

/* The NHWC convolution requantized as it stores (qnn.contrib_conv2d_packed_requant). */
int32_t rl_qconv2d_u8s8_rq(const uint8_t* restrict x, const int8_t* restrict bp,
                           const int32_t* restrict bias, const float* restrict scale,
                           uint8_t* restrict out, int64_t N, int64_t C, int64_t H, int64_t W,
                           int64_t O, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                           int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t dh,
                           int64_t dw, int64_t pad_value, int64_t nhwc, int64_t zp,
                           int64_t lo, int64_t hi, int64_t min_work) {
  if (!nhwc) return -1;  /* the type relation admits NHWC alone */
  const rl_qrq rq = {bias, scale, (float)lo, (float)hi, (int32_t)zp};
  return rl_qconv2d(x, bp, NULL, N, C, H, W, O, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw,
                    pad_value, 1, min_work, &rq, out);
}
"""

# vpermb's index for rl_qdw_column: byte 4c + k of the result is byte 16k + c of the
# three rows' 16 channels (k = 3 reads the zero lane)
_COLUMN_INDEX = ", ".join(str(16 * k + c) for c in range(16) for k in range(4))

DEPTHWISE = r"""
#if !defined(RL_SCALAR_MICROKERNELS) && defined(__AVX512F__)
#include <immintrin.h>
#endif
#if !defined(RL_SCALAR_MICROKERNELS) && defined(__AVX512VNNI__) && defined(__AVX512VBMI__) \
    && defined(__AVX512BW__)
#define RL_QDW_DOT 1
#endif
/* out (N, C, OH, OW) int32 = the depthwise convolution of x (N, C, H, W) uint8, padded
   with pad_value, by w (C, 1, KH, KW) int8 (or NHWC data and output, below). In NCHW,
   channels go 16 at a time: their planes are
   interleaved into one padded buffer (a pixel's 16 channels adjacent), so that each tap
   of an output pixel is one 16-lane u8 x s8 multiply-add in int32, vectorised across the
   channels (the float kernels' NCHW16c idea), whatever the width of the image. */
/* One output pixel of 16 channels: the KH x KW taps, each a 16-lane multiply-add. */
static inline __attribute__((always_inline)) void rl_qdw_pixel(
    const uint8_t* restrict plane, const int32_t* restrict wv, int32_t* restrict rows,
    int64_t oh, int64_t ow, int64_t OW, int64_t Wp, int64_t sh, int64_t sw, int64_t dh,
    int64_t dw, int64_t KH, int64_t KW) {
  int32_t acc[16];
#if !defined(RL_SCALAR_MICROKERNELS) && defined(__AVX512F__)
  /* explicit: gcc's cost model picks 128-bit vectors for the generic loop below */
  __m512i a = _mm512_setzero_si512();
  #pragma GCC unroll 3
  for (int64_t i = 0; i < KH; ++i)
    #pragma GCC unroll 3
    for (int64_t j = 0; j < KW; ++j) {
      const uint8_t* p = plane + ((oh * sh + i * dh) * Wp + ow * sw + j * dw) * 16;
      const __m512i x = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i*)p));
      const __m512i w = _mm512_loadu_si512((const void*)(wv + (i * KW + j) * 16));
      a = _mm512_add_epi32(a, _mm512_mullo_epi32(x, w));
    }
  _mm512_storeu_si512((void*)acc, a);
#else
  for (int l = 0; l < 16; ++l) acc[l] = 0;
  #pragma GCC unroll 3
  for (int64_t i = 0; i < KH; ++i)
    #pragma GCC unroll 3
    for (int64_t j = 0; j < KW; ++j) {
      const uint8_t* p = plane + ((oh * sh + i * dh) * Wp + ow * sw + j * dw) * 16;
      const int32_t* wt = wv + (i * KW + j) * 16;
      #pragma omp simd
      for (int l = 0; l < 16; ++l) acc[l] += (int32_t)p[l] * wt[l];
    }
#endif
  for (int l = 0; l < 16; ++l) rows[l * OW + ow] = acc[l];
}

/* One output pixel of NHWC data, channels [c0, c0 + n) (n <= 16): the KH x KW taps,
   each a 16-lane multiply-add of the pixel's channels, contiguous in x; a tap in the
   padding adds its pad contribution pw (pad_value times the weight). `inside`: every
   tap of this pixel is in the image. Stored at o + at (int32), or requantized at
   o8 + at (uint8) with `rq`. */
static inline __attribute__((always_inline)) void rl_qdw_nhwc_pixel(
    const uint8_t* restrict x, const int32_t* restrict wv, const int32_t* restrict pw,
    int32_t* restrict o, uint8_t* restrict o8, int64_t at, int64_t C, int64_t CP, int64_t H,
    int64_t W, int64_t ih0, int64_t iw0, int64_t dh, int64_t dw, int64_t KH, int64_t KW,
    int64_t c0, int64_t n, int inside, const rl_qrq* rq) {
#if !defined(RL_SCALAR_MICROKERNELS) && defined(__AVX512F__) && defined(__AVX512BW__)
  const __mmask16 m = (__mmask16)(n >= 16 ? 0xFFFF : (1u << n) - 1);
  __m512i a = _mm512_setzero_si512();
  #pragma GCC unroll 3
  for (int64_t i = 0; i < KH; ++i) {
    const int64_t ih = ih0 + i * dh;
    #pragma GCC unroll 3
    for (int64_t j = 0; j < KW; ++j) {
      const int64_t iw = iw0 + j * dw, t = (i * KW + j) * CP + c0;
      if (inside || (ih >= 0 && ih < H && iw >= 0 && iw < W)) {
        const __m128i b = _mm_maskz_loadu_epi8(m, x + (ih * W + iw) * C + c0);
        a = _mm512_add_epi32(a, _mm512_mullo_epi32(_mm512_cvtepu8_epi32(b),
                                                   _mm512_loadu_si512((const void*)(wv + t))));
      } else {
        a = _mm512_add_epi32(a, _mm512_loadu_si512((const void*)(pw + t)));
      }
    }
  }
  if (rq) rl_qrq_store16(rq, a, c0, m, o8 + at);
  else _mm512_mask_storeu_epi32((void*)(o + at), m, a);
#else
  int32_t acc[16];
  for (int l = 0; l < 16; ++l) acc[l] = 0;
  for (int64_t i = 0; i < KH; ++i) {
    const int64_t ih = ih0 + i * dh;
    for (int64_t j = 0; j < KW; ++j) {
      const int64_t iw = iw0 + j * dw, t = (i * KW + j) * CP + c0;
      if (inside || (ih >= 0 && ih < H && iw >= 0 && iw < W)) {
        const uint8_t* p = x + (ih * W + iw) * C + c0;
        if (n == 16) {
          #pragma omp simd
          for (int l = 0; l < 16; ++l) acc[l] += (int32_t)p[l] * wv[t + l];
        } else {
          for (int l = 0; l < n; ++l) acc[l] += (int32_t)p[l] * wv[t + l];
        }
      } else {
        #pragma omp simd
        for (int l = 0; l < 16; ++l) acc[l] += pw[t + l];
      }
    }
  }
  if (rq)
    for (int64_t l = 0; l < n; ++l) o8[at + l] = rl_qrq_one(rq, acc[l], c0 + l);
  else
    for (int64_t l = 0; l < n; ++l) o[at + l] = acc[l];
#endif
}

#if !defined(RL_SCALAR_MICROKERNELS) && defined(__AVX512F__) && defined(__AVX512BW__)
/* The output pixels [lo, hi) of one row whose 3x3 windows are inside the image, channels
   [c0, c0 + n): rl_qdw_nhwc_pixel with the 9 weight vectors held in registers across
   the row instead of reloaded per pixel. */
static inline void rl_qdw_nhwc_row3x3(
    const uint8_t* restrict x, const int32_t* restrict wv, int32_t* restrict o,
    uint8_t* restrict o8, int64_t C, int64_t CP, int64_t W, int64_t ih0, int64_t lo,
    int64_t hi, int64_t sw, int64_t pl, int64_t dh, int64_t dw, int64_t c0, int64_t n,
    const rl_qrq* rq) {
  const __mmask16 m = (__mmask16)(n >= 16 ? 0xFFFF : (1u << n) - 1);
  __m512i wt[9];
  for (int t = 0; t < 9; ++t) wt[t] = _mm512_loadu_si512((const void*)(wv + t * CP + c0));
  for (int64_t ow = lo; ow < hi; ++ow) {
    const uint8_t* p = x + (ih0 * W + ow * sw - pl) * C + c0;
    __m512i a = _mm512_setzero_si512();
    #pragma GCC unroll 3
    for (int i = 0; i < 3; ++i)
      #pragma GCC unroll 3
      for (int j = 0; j < 3; ++j) {
        const __m128i b = _mm_maskz_loadu_epi8(m, p + (i * dh * W + j * dw) * C);
        a = _mm512_add_epi32(a, _mm512_mullo_epi32(_mm512_cvtepu8_epi32(b), wt[i * 3 + j]));
      }
    if (rq) rl_qrq_store16(rq, a, c0, m, o8 + ow * C + c0);
    else _mm512_mask_storeu_epi32((void*)(o + ow * C + c0), m, a);
  }
}
#endif

#ifdef RL_QDW_DOT
/* A 3x3 window's column of taps for 16 channels: the three input rows' bytes at q,
   q + row, q + 2 row interleaved (vpermb) into the 4-byte groups vpdpbusd multiplies,
   {x(r0, c), x(r1, c), x(r2, c), 0} for channel c. */
static inline __attribute__((always_inline)) __m512i rl_qdw_column(
    const uint8_t* q, int64_t row, __mmask16 m, __m512i index) {
  __m512i v = _mm512_zextsi128_si512(_mm_maskz_loadu_epi8(m, q));
  v = _mm512_inserti32x4(v, _mm_maskz_loadu_epi8(m, q + row), 1);
  v = _mm512_inserti32x4(v, _mm_maskz_loadu_epi8(m, q + 2 * row), 2);
  return _mm512_permutexvar_epi8(index, v);
}

/* rl_qdw_nhwc_row3x3 on vpdpbusd: a pixel is 3 vpdpbusd of its window's columns by the
   column weights w4 [j][channel][4] = {w(0, j), w(1, j), w(2, j), 0} (u8 x s8 summed in
   int32: exact); at stride 1 each column is interleaved once for the 3 pixels that read
   it. 27 instructions per pixel of 16 channels become 7 (stride 1) or 15. */
static inline void rl_qdw_nhwc_row3x3_dot(
    const uint8_t* restrict x, const int8_t* restrict w4, int32_t* restrict o,
    uint8_t* restrict o8, int64_t C, int64_t CP, int64_t W, int64_t ih0, int64_t lo,
    int64_t hi, int64_t sw, int64_t pl, int64_t dh, int64_t dw, int64_t c0, int64_t n,
    const rl_qrq* rq) {
  static const uint8_t index_bytes[64] __attribute__((aligned(64))) = {@COLUMN_INDEX@};
  if (lo >= hi) return;
  const __mmask16 m = (__mmask16)(n >= 16 ? 0xFFFF : (1u << n) - 1);
  const __m512i index = _mm512_load_si512((const void*)index_bytes);
  const __m512i w0 = _mm512_loadu_si512((const void*)(w4 + c0 * 4));
  const __m512i w1 = _mm512_loadu_si512((const void*)(w4 + (CP + c0) * 4));
  const __m512i w2 = _mm512_loadu_si512((const void*)(w4 + (2 * CP + c0) * 4));
  const int64_t row = dh * W * C;
  const uint8_t* base = x + (ih0 * W - pl) * C + c0;
  if (sw == 1 && dw == 1) {
    __m512i a = rl_qdw_column(base + lo * C, row, m, index);
    __m512i b = rl_qdw_column(base + (lo + 1) * C, row, m, index);
    for (int64_t ow = lo; ow < hi; ++ow) {
      const __m512i c = rl_qdw_column(base + (ow + 2) * C, row, m, index);
      __m512i acc = _mm512_dpbusd_epi32(_mm512_setzero_si512(), a, w0);
      acc = _mm512_dpbusd_epi32(acc, b, w1);
      acc = _mm512_dpbusd_epi32(acc, c, w2);
      if (rq) rl_qrq_store16(rq, acc, c0, m, o8 + ow * C + c0);
      else _mm512_mask_storeu_epi32((void*)(o + ow * C + c0), m, acc);
      a = b;
      b = c;
    }
    return;
  }
  for (int64_t ow = lo; ow < hi; ++ow) {
    const uint8_t* p = base + ow * sw * C;
    __m512i acc = _mm512_dpbusd_epi32(_mm512_setzero_si512(),
                                      rl_qdw_column(p, row, m, index), w0);
    acc = _mm512_dpbusd_epi32(acc, rl_qdw_column(p + dw * C, row, m, index), w1);
    acc = _mm512_dpbusd_epi32(acc, rl_qdw_column(p + 2 * dw * C, row, m, index), w2);
    if (rq) rl_qrq_store16(rq, acc, c0, m, o8 + ow * C + c0);
    else _mm512_mask_storeu_epi32((void*)(o + ow * C + c0), m, acc);
  }
}
#endif

/* The NHWC depthwise convolution: x (N, H, W, C) uint8 → out (N, OH, OW, C) int32. A
   pixel's channels are contiguous in both, so the taps read the input in place (no
   interleaving copy) and the sums store as they are; the weight is laid out once per
   call as [tap][channel] int32 (channels padded to 16). Rows of output pixels are
   shared by the team. */
static int32_t rl_qdepthwise_nhwc(const uint8_t* restrict x, const int8_t* restrict w,
                                  int32_t* restrict out, int64_t N, int64_t C, int64_t H,
                                  int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                                  int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t dh,
                                  int64_t dw, int64_t pad_value, int64_t min_work,
                                  const rl_qrq* rq, uint8_t* restrict out8) {
  const int64_t T = KH * KW, CP = (C + 15) / 16 * 16;
  /* wv, pw: [tap][channel] int32; w4: a 3x3 window's column weights for vpdpbusd */
  int32_t* wv = (int32_t*)malloc((size_t)(2 * T * CP) * sizeof(int32_t) + (size_t)(12 * CP));
  if (!wv) return -1;
  int32_t* pw = wv + T * CP;
  int8_t* w4 = (int8_t*)(pw + T * CP);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < CP; ++c) {
      wv[t * CP + c] = c < C ? (int32_t)w[c * T + t] : 0;
      pw[t * CP + c] = (int32_t)pad_value * wv[t * CP + c];
    }
  for (int64_t j = 0; j < 3; ++j)
    for (int64_t c = 0; c < CP; ++c)
      for (int64_t k = 0; k < 4; ++k)
        w4[(j * CP + c) * 4 + k] = T == 9 && k < 3 && c < C ? w[c * 9 + k * 3 + j] : 0;
  /* the output columns whose windows are inside the image across */
  int64_t lo = (pl + sw - 1) / sw, hi = W - 1 + pl - (KW - 1) * dw;
  hi = hi < 0 ? 0 : hi / sw + 1;
  if (hi > OW) hi = OW;
  if (lo > hi) lo = hi;
  /* rows x 16-channel blocks shared by the team: a 7x7 output has 7 rows, 960 channels */
  const int64_t CB = (C + 15) / 16;
  const int team = rl_team(N * C * OH * OW * T, min_work, N * OH * CB);
  #pragma omp parallel for num_threads(team) if(team > 1) schedule(static)
  for (int64_t rc = 0; rc < N * OH * CB; ++rc) {
    const int64_t r = rc / CB, c0 = rc % CB * 16;
    const int64_t b = r / OH, oh = r % OH, ih0 = oh * sh - pt;
    const uint8_t* xb = x + b * H * W * C;
    int32_t* orow = rq ? NULL : out + r * OW * C;
    uint8_t* orow8 = rq ? out8 + r * OW * C : NULL;
    const int rows_in = ih0 >= 0 && ih0 + (KH - 1) * dh < H;
    const int64_t n = C - c0 < 16 ? C - c0 : 16;
    int64_t ow = 0;
    for (; ow < lo; ++ow)
      rl_qdw_nhwc_pixel(xb, wv, pw, orow, orow8, ow * C + c0, C, CP, H, W, ih0,
                        ow * sw - pl, dh, dw, KH, KW, c0, n, 0, rq);
    if (rows_in && KH == 3 && KW == 3) {  /* the usual window: constant trip counts */
#if defined(RL_QDW_DOT)
      rl_qdw_nhwc_row3x3_dot(xb, w4, orow, orow8, C, CP, W, ih0, ow, hi, sw, pl, dh, dw, c0,
                             n, rq);
      ow = hi > ow ? hi : ow;
#elif !defined(RL_SCALAR_MICROKERNELS) && defined(__AVX512F__) && defined(__AVX512BW__)
      rl_qdw_nhwc_row3x3(xb, wv, orow, orow8, C, CP, W, ih0, ow, hi, sw, pl, dh, dw, c0,
                         n, rq);
      ow = hi > ow ? hi : ow;
#else
      for (; ow < hi; ++ow)
        rl_qdw_nhwc_pixel(xb, wv, pw, orow, orow8, ow * C + c0, C, CP, H, W, ih0,
                          ow * sw - pl, dh, dw, 3, 3, c0, n, 1, rq);
#endif
    } else
      for (; ow < hi; ++ow)
        rl_qdw_nhwc_pixel(xb, wv, pw, orow, orow8, ow * C + c0, C, CP, H, W, ih0,
                          ow * sw - pl, dh, dw, KH, KW, c0, n, rows_in, rq);
    for (; ow < OW; ++ow)
      rl_qdw_nhwc_pixel(xb, wv, pw, orow, orow8, ow * C + c0, C, CP, H, W, ih0,
                        ow * sw - pl, dh, dw, KH, KW, c0, n, 0, rq);
  }
  free(wv);
  return 0;
}

int32_t rl_qdepthwise_u8s8(const uint8_t* restrict x, const int8_t* restrict w,
                           int32_t* restrict out, int64_t N, int64_t C, int64_t H, int64_t W,
                           int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                           int64_t sw, int64_t pt, int64_t pl, int64_t dh, int64_t dw,
                           int64_t pad_value, int64_t nhwc, int64_t min_work) {
  if (nhwc)
    return rl_qdepthwise_nhwc(x, w, out, N, C, H, W, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw,
                              pad_value, min_work, NULL, NULL);
  enum { L = 16 };
  const int64_t Hp = (OH - 1) * sh + (KH - 1) * dh + 1, Wp = (OW - 1) * sw + (KW - 1) * dw + 1;
  const int64_t blocks = (C + L - 1) / L;
  const int team = rl_team(N * C * OH * OW * KH * KW, min_work, N * blocks);
  int failed = 0;
  #pragma omp parallel num_threads(team) if(team > 1)
  {
    rl_team_arrive();
    uint8_t* plane = (uint8_t*)malloc((size_t)(Hp * Wp * L + 64));
    int32_t* rows = (int32_t*)malloc((size_t)(L * OW) * sizeof(int32_t));
    int32_t* wv = (int32_t*)malloc((size_t)(KH * KW * L) * sizeof(int32_t));
    if (!plane || !rows || !wv) {
      #pragma omp atomic write
      failed = 1;
    }
    #pragma omp for schedule(static)
    for (int64_t nb = 0; nb < N * blocks; ++nb) {
      if (!plane || !rows || !wv) continue;
      const int64_t b = nb / blocks, c0 = (nb % blocks) * L;
      const int64_t nc = C - c0 < L ? C - c0 : L;
      memset(plane, (int)pad_value, (size_t)(Hp * Wp * L));
      for (int64_t l = 0; l < nc; ++l) {
        const uint8_t* src = x + ((b * C) + c0 + l) * H * W;
        for (int64_t h = 0; h < H; ++h) {
          const int64_t r = h + pt;
          if (r < 0 || r >= Hp) continue;
          for (int64_t q = 0; q < W; ++q)
            if (q + pl >= 0 && q + pl < Wp) plane[(r * Wp + q + pl) * L + l] = src[h * W + q];
        }
      }
      for (int64_t t = 0; t < KH * KW; ++t)
        for (int64_t l = 0; l < L; ++l) wv[t * L + l] = l < nc ? w[(c0 + l) * KH * KW + t] : 0;
      for (int64_t oh = 0; oh < OH; ++oh) {
        if (KH == 3 && KW == 3)  /* the usual window: constant trip counts, unrolled */
          for (int64_t ow = 0; ow < OW; ++ow) rl_qdw_pixel(plane, wv, rows, oh, ow, OW, Wp,
                                                          sh, sw, dh, dw, 3, 3);
        else
          for (int64_t ow = 0; ow < OW; ++ow) rl_qdw_pixel(plane, wv, rows, oh, ow, OW, Wp,
                                                          sh, sw, dh, dw, KH, KW);
        for (int64_t l = 0; l < nc; ++l)
          memcpy(out + ((b * C) + c0 + l) * OH * OW + oh * OW, rows + l * OW,
                 (size_t)OW * sizeof(int32_t));
      }
    }
    free(plane);
    free(rows);
    free(wv);
  }
  return failed ? -1 : 0;
}

/* The NHWC depthwise convolution requantized as it stores. */
int32_t rl_qdepthwise_u8s8_rq(const uint8_t* restrict x, const int8_t* restrict w,
                              const int32_t* restrict bias, const float* restrict scale,
                              uint8_t* restrict out, int64_t N, int64_t C, int64_t H,
                              int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                              int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t dh,
                              int64_t dw, int64_t pad_value, int64_t nhwc, int64_t zp,
                              int64_t lo, int64_t hi, int64_t min_work) {
  if (!nhwc) return -1;  /* the type relation admits NHWC alone */
  const rl_qrq rq = {bias, scale, (float)lo, (float)hi, (int32_t)zp};
  return rl_qdepthwise_nhwc(x, w, NULL, N, C, H, W, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw,
                            pad_value, min_work, &rq, out);
}
"""
DEPTHWISE = DEPTHWISE.replace("@COLUMN_INDEX@", _COLUMN_INDEX)


def routines() -> dict[str, tuple[str, tuple[str, ...]]]:
    """``{name: (C source, required routine names)}`` for the codegen routine table."""
    # one text defines both routines: the convolution's entry only requires it
    return {"rl_qrq": (REQUANT, ()),
            "rl_qgemm_u8s8": (QGEMM, ("rl_qrq",)),
            "rl_qconv2d_u8s8": ("", ("rl_qgemm_u8s8",)),
            "rl_qconv2d_u8s8_rq": ("", ("rl_qgemm_u8s8",)),
            "rl_qdepthwise_u8s8": (DEPTHWISE, ("rl_qrq",)),
            "rl_qdepthwise_u8s8_rq": ("", ("rl_qdepthwise_u8s8",))}
