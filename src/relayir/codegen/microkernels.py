"""C text of the register-tile micro-kernels (``tir/microkernel.py`` says what they compute).

One function per tile shape a module uses, e.g. ``rl_gemm_f32_14x32`` (14 rows × two
16-float vectors: 28 accumulators of AVX-512's 32 registers). The body is written with
GCC/Clang vector extensions: a ``vector_size(lanes * sizeof(T))`` type becomes one
zmm / ymm / NEON register on the machine the tile was sized for (the target's ``-march``), and
``acc += s * b`` with a scalar ``s`` becomes a broadcast fused multiply-add
(``-ffp-contract=fast``). The loops over rows and vectors are fully unrolled, so the
accumulators live in registers; the reduction loops run as written, three levels deep
(a convolution's channel and window loops stay inside one call). A compiler without
vector extensions (or ``-DRL_SCALAR_MICROKERNELS``) gets the same loops over scalars.

No shortcut skips a zero: ``0 * NaN`` stays NaN, like the reference.
"""

from __future__ import annotations

from ..tir.microkernel import MICROKERNEL_DTYPES, MicroKernel

_VECTOR_GUARD = "#if (defined(__GNUC__) || defined(__clang__)) && !defined(RL_SCALAR_MICROKERNELS)"


def _vector_type(ctype: str, suffix: str, lanes: int) -> tuple[str, str]:
    name = f"rl_v{suffix}x{lanes}"
    text = (f"typedef {ctype} {name} __attribute__((vector_size({lanes} * sizeof({ctype})), "
            f"aligned(sizeof({ctype})), may_alias));")
    return name, text


_PARAMS = ("{t}* restrict c, int64_t first, int64_t rows, const {t}* restrict a, int64_t rsa, "
           "const {t}* restrict b, int64_t n0, int64_t sa0, int64_t sb0, int64_t n1, "
           "int64_t sa1, int64_t sb1, int64_t n2, int64_t sa2, int64_t sb2")


def microkernel_source(k: MicroKernel) -> str:
    """The C definition of ``k`` (its vector typedef is ``microkernel_typedef(k)``)."""
    t, suffix = MICROKERNEL_DTYPES[k.dtype]
    vec, _ = _vector_type(t, suffix, k.lanes)
    mr, nv, lanes, ku = k.mr, k.nv, k.lanes, k.kunroll
    params = _PARAMS.format(t=t)
    unroll = f"#pragma GCC unroll {max(mr, nv, ku, 2)}"
    return f"""/* {k.name}: C[{mr}][{k.nr}] (+)= A * B, {ku} set(s) of {mr}x{nv} vector accumulators
   (tir/microkernel.py gives the arguments). */
static inline __attribute__((always_inline)) void {k.name}({params}) {{
  enum {{ MR = {mr}, NV = {nv}, L = {lanes}, KU = {ku} }};
  const {t}* ar[MR];
  {unroll}
  for (int i = 0; i < MR; ++i) ar[i] = a + (i < rows ? i : rows - 1) * rsa;
{_VECTOR_GUARD}
  {vec} acc[KU][MR][NV];
  {unroll}
  for (int u = 0; u < KU; ++u)
    {unroll}
    for (int i = 0; i < MR; ++i)
      {unroll}
      for (int v = 0; v < NV; ++v)
        acc[u][i][v] = (u == 0 && !first) ? *(const {vec}*)(c + i * NV * L + v * L)
                                          : ({vec}){{0}};
  for (int64_t k0 = 0; k0 < n0; ++k0) {{
    for (int64_t k1 = 0; k1 < n1; ++k1) {{
      const {t}* restrict bk = b + k0 * sb0 + k1 * sb1;
      const int64_t ak = k0 * sa0 + k1 * sa1;
      int64_t k2 = 0;
      for (; k2 + KU <= n2; k2 += KU) {{
        {unroll}
        for (int u = 0; u < KU; ++u) {{
          {vec} bv[NV];
          {unroll}
          for (int v = 0; v < NV; ++v) bv[v] = *(const {vec}*)(bk + (k2 + u) * sb2 + v * L);
          {unroll}
          for (int i = 0; i < MR; ++i) {{
            const {t} s = ar[i][ak + (k2 + u) * sa2];
            {unroll}
            for (int v = 0; v < NV; ++v) acc[u][i][v] += s * bv[v];
          }}
        }}
      }}
      for (; k2 < n2; ++k2) {{
        {vec} bv[NV];
        {unroll}
        for (int v = 0; v < NV; ++v) bv[v] = *(const {vec}*)(bk + k2 * sb2 + v * L);
        {unroll}
        for (int i = 0; i < MR; ++i) {{
          const {t} s = ar[i][ak + k2 * sa2];
          {unroll}
          for (int v = 0; v < NV; ++v) acc[0][i][v] += s * bv[v];
        }}
      }}
    }}
  }}
  {unroll}
  for (int i = 0; i < MR; ++i)
    {unroll}
    for (int v = 0; v < NV; ++v) {{
      {vec} sum = acc[0][i][v];
      {unroll}
      for (int u = 1; u < KU; ++u) sum += acc[u][i][v];
      *({vec}*)(c + i * NV * L + v * L) = sum;
    }}
#else
  {t} acc[MR][NV * L];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV * L; ++j) acc[i][j] = first ? 0 : c[i * NV * L + j];
  for (int64_t k0 = 0; k0 < n0; ++k0)
    for (int64_t k1 = 0; k1 < n1; ++k1)
      for (int64_t k2 = 0; k2 < n2; ++k2) {{
        const {t}* restrict bk = b + k0 * sb0 + k1 * sb1 + k2 * sb2;
        const int64_t ak = k0 * sa0 + k1 * sa1 + k2 * sa2;
        for (int i = 0; i < MR; ++i)
          for (int j = 0; j < NV * L; ++j) acc[i][j] += ar[i][ak] * bk[j];
      }}
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV * L; ++j) c[i * NV * L + j] = acc[i][j];
#endif
}}
"""


def microkernel_typedef(k: MicroKernel) -> str:
    t, suffix = MICROKERNEL_DTYPES[k.dtype]
    return _vector_type(t, suffix, k.lanes)[1]


def microkernel_sources(kernels) -> str:
    """The C text defining ``kernels`` (``MicroKernel``s), each once, with the vector types
    they use, in first-use order (the text is part of the compile cache key)."""
    typedefs, bodies, seen = [], [], set()
    for k in kernels:
        if k in seen:
            continue
        seen.add(k)
        td = microkernel_typedef(k)
        if td not in typedefs:
            typedefs.append(td)
        bodies.append(microkernel_source(k))
    if not bodies:
        return ""
    guard = _VECTOR_GUARD + "\n" + "\n".join(typedefs) + "\n#endif\n"
    return guard + "\n".join(bodies) + "\n"


__all__ = ["microkernel_source", "microkernel_sources", "microkernel_typedef"]
