// The AVX-512 TreeEnsemble loop: 16 rows per register (one lane per row, the row block transposed
// feature-major), four trees walked at once so that their gathers overlap, level-order tables
// with the child step `2k + 2 - left` done as vector arithmetic. The first six levels (up to 32
// nodes) pick node words and thresholds with in-register permutes; deeper levels gather them.
// Leaves are added in tree order, so the sums are exactly the scalar loop's.
#include "trees_kernel.h"

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics pass `_mm512_undefined_*()` (a self-initialised variable) as the
// unused merge source, which -Wmaybe-uninitialized reports once they are inlined here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace collage::rt_trees {

bool cpu_has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

namespace {

constexpr int kRows = 16;   // lanes
constexpr int kChains = 4;  // trees in flight

// One level of one tree for 16 rows: `pos` is each row's position within the level (0..2^l-1);
// returns the position in the next level.
template <bool kNan>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"), always_inline)) inline __m512i step(
    int level, const int32_t* word, const float* threshold, const float* xb, __m512i pos) {
  const int off = (1 << level) - 1;
  __m512i w;
  __m512 th;
  if (level <= 4) {
    w = _mm512_permutexvar_epi32(pos, _mm512_loadu_si512(word + off));
    th = _mm512_permutexvar_ps(pos, _mm512_loadu_ps(threshold + off));
  } else if (level == 5) {
    w = _mm512_permutex2var_epi32(_mm512_loadu_si512(word + off), pos,
                                  _mm512_loadu_si512(word + off + 16));
    th = _mm512_permutex2var_ps(_mm512_loadu_ps(threshold + off), pos,
                                _mm512_loadu_ps(threshold + off + 16));
  } else {
    w = _mm512_i32gather_epi32(pos, word + off, 4);
    th = _mm512_i32gather_ps(pos, threshold + off, 4);
  }
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i feature = _mm512_and_si512(w, _mm512_set1_epi32(0x7fffffff));
  const __m512 v =
      _mm512_i32gather_ps(_mm512_add_epi32(_mm512_slli_epi32(feature, 4), lane), xb, 4);
  __mmask16 left = _mm512_cmp_ps_mask(v, th, _CMP_LT_OQ);
  if constexpr (kNan) left |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) & _mm512_movepi32_mask(w);
  // next = 2 * pos + (left ? 0 : 1)
  const __m512i twice = _mm512_add_epi32(pos, pos);
  return _mm512_mask_add_epi32(twice, static_cast<__mmask16>(~left), twice, _mm512_set1_epi32(1));
}

template <bool kNan>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void walk_block(
    const EnsembleTables& t, const float* xb, float* acc) {
  const EnsembleShape& s = t.shape;
  const int64_t n = s.internal();
  const int depth = static_cast<int>(s.depth);
  int64_t tree = 0;
  for (; tree + kChains <= s.trees; tree += kChains) {
    __m512i pos[kChains];
    for (int c = 0; c < kChains; ++c) pos[c] = _mm512_setzero_si512();
    for (int level = 0; level < depth; ++level)
      for (int c = 0; c < kChains; ++c)
        pos[c] =
            step<kNan>(level, t.word + (tree + c) * n, t.threshold + (tree + c) * n, xb, pos[c]);
    for (int c = 0; c < kChains; ++c) {
      const __m512 leaf = _mm512_i32gather_ps(pos[c], t.leaf + (tree + c) * (n + 1), 4);
      float* a = acc + t.tree_output[tree + c] * kRows;
      _mm512_store_ps(a, _mm512_add_ps(_mm512_load_ps(a), leaf));
    }
  }
  for (; tree < s.trees; ++tree) {
    __m512i pos = _mm512_setzero_si512();
    for (int level = 0; level < depth; ++level)
      pos = step<kNan>(level, t.word + tree * n, t.threshold + tree * n, xb, pos);
    const __m512 leaf = _mm512_i32gather_ps(pos, t.leaf + tree * (n + 1), 4);
    float* a = acc + t.tree_output[tree] * kRows;
    _mm512_store_ps(a, _mm512_add_ps(_mm512_load_ps(a), leaf));
  }
}

}  // namespace

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void run_avx512(
    const EnsembleTables& t, const float* x, float* y, int64_t row_begin, int64_t row_end) {
  const EnsembleShape& s = t.shape;
  const auto features = static_cast<size_t>(s.features);
  const auto outputs = static_cast<size_t>(s.outputs);
  // The row block feature-major (xb[f * 16 + lane]) and the per-output sums, 64-byte aligned.
  std::vector<float> buffer(features * kRows + outputs * kRows + 16);
  float* xb =
      reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(buffer.data()) + 63) & ~uintptr_t{63});
  float* acc = xb + features * kRows;
  for (int64_t r0 = row_begin; r0 < row_end; r0 += kRows) {
    const int rows = static_cast<int>(std::min<int64_t>(kRows, row_end - r0));
    bool nan = false;
    for (int r = 0; r < kRows; ++r)
      for (size_t f = 0; f < features; ++f) {
        const float v = r < rows ? x[(r0 + r) * s.features + static_cast<int64_t>(f)] : 0.f;
        nan |= v != v;
        xb[f * kRows + r] = v;
      }
    for (size_t o = 0; o < outputs; ++o)
      _mm512_store_ps(acc + o * kRows, _mm512_set1_ps(t.base[o]));
    if (nan)
      walk_block<true>(t, xb, acc);
    else
      walk_block<false>(t, xb, acc);
    float* out = y + r0 * s.outputs;
    if (outputs == 1) {
      _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << rows) - 1), _mm512_load_ps(acc));
    } else {
      for (int r = 0; r < rows; ++r)
        for (size_t o = 0; o < outputs; ++o)
          out[r * s.outputs + static_cast<int64_t>(o)] = acc[o * kRows + r];
    }
  }
}

}  // namespace collage::rt_trees

#else

namespace collage::rt_trees {

bool cpu_has_avx512() {
  return false;
}

void run_avx512(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
                int64_t row_end) {
  run_scalar(t, x, y, row_begin, row_end);
}

}  // namespace collage::rt_trees

#endif
