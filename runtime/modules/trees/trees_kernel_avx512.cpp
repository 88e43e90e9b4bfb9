// The AVX-512 TreeEnsemble loop: 16 rows per register (one lane per row, the row block transposed
// feature-major), eight trees walked at once so that their gathers overlap, level-order tables
// with the child step `2k + 2 - left` done as vector arithmetic. The first eight levels (up to
// 128 nodes) pick node words and thresholds with in-register permutes and blends, the first
// four read x by blending whole feature rows; only deeper levels, x below level 4 and the
// leaves are gathered. Leaves are added in tree order, so the sums are exactly the scalar loop's.
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
// Trees in flight: 8 measured 6-10 % less CPU time than 4 (500 trees of depth 8, batch 10,000),
// 12 and 16 no better.
constexpr int kChains = 8;
// Levels whose x values come from whole feature rows blended per lane (1, 2, 4 or 8 loads)
// rather than a gather, and levels whose node tables (up to 128 entries) are read with permutes
// rather than gathers; on Zen 4 a gather costs about as much as 8-15 permutes or blends. With 8
// trees in flight, row loads at level 3 measured 8-10 % faster, at level 4 no faster, and
// permutes for the 256 leaves no faster than their gather.
constexpr int kRowLevels = 3;
constexpr int kPermuteLevels = 7;

#define COLLAGE_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"), always_inline))

COLLAGE_AVX512 inline __m512 blend(__mmask16 m, __m512 a, __m512 b) {
  return _mm512_mask_blend_ps(m, a, b);
}
COLLAGE_AVX512 inline __m512i blend(__mmask16 m, __m512i a, __m512i b) {
  return _mm512_mask_blend_epi32(m, a, b);
}

// v[i] per lane, for kCount (a power of two) vectors, i being the bits of pos from `first` up.
template <int kCount, typename V>
COLLAGE_AVX512 inline V select(const V* v, __m512i pos, int first) {
  if constexpr (kCount == 1) {
    return v[0];
  } else {
    const __mmask16 high = _mm512_test_epi32_mask(pos, _mm512_set1_epi32((kCount / 2) << first));
    return blend(high, select<kCount / 2>(v, pos, first),
                 select<kCount / 2>(v + kCount / 2, pos, first));
  }
}

// Entry `pos` of one level's table (2^level entries from `table`), per lane: a permute for up
// to 32 entries, permutes and blends up to 128, a gather beyond.
template <int kLevel>
COLLAGE_AVX512 inline __m512i lookup(const int32_t* table, __m512i pos) {
  if constexpr (kLevel <= 4) {
    return _mm512_permutexvar_epi32(pos, _mm512_loadu_si512(table));
  } else if constexpr (kLevel <= kPermuteLevels) {
    constexpr int kPairs = 1 << (kLevel - 5);
    __m512i part[kPairs];
    for (int i = 0; i < kPairs; ++i)
      part[i] = _mm512_permutex2var_epi32(_mm512_loadu_si512(table + 32 * i), pos,
                                          _mm512_loadu_si512(table + 32 * i + 16));
    return select<kPairs>(part, pos, 5);
  } else {
    return _mm512_i32gather_epi32(pos, table, 4);
  }
}

// One level of one tree for 16 rows: `pos` is each row's position within the level (0..2^l-1);
// returns the position in the next level. kLevel is the level when it is below 8, else -1 (the
// level is then `level`, run time).
template <int kLevel, bool kNan>
COLLAGE_AVX512 inline __m512i step(int level, const int32_t* word, const float* threshold,
                                   const float* xb, __m512i pos) {
  const int off = (1 << level) - 1;
  __m512i w;
  __m512 th, v;
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  if constexpr (kLevel >= 0) {
    w = lookup<kLevel>(word + off, pos);
    th =
        _mm512_castsi512_ps(lookup<kLevel>(reinterpret_cast<const int32_t*>(threshold) + off, pos));
  } else {
    w = _mm512_i32gather_epi32(pos, word + off, 4);
    th = _mm512_i32gather_ps(pos, threshold + off, 4);
  }
  if constexpr (kLevel >= 0 && kLevel <= kRowLevels) {
    // Few nodes: load each node's whole feature row and blend, instead of gathering.
    __m512 rows[1 << kLevel];
    for (int i = 0; i < (1 << kLevel); ++i)
      rows[i] = _mm512_load_ps(xb + (word[off + i] & 0x7fffffff) * kRows);
    v = select<(1 << kLevel)>(rows, pos, 0);
  } else {
    const __m512i feature = _mm512_and_si512(w, _mm512_set1_epi32(0x7fffffff));
    v = _mm512_i32gather_ps(_mm512_add_epi32(_mm512_slli_epi32(feature, 4), lane), xb, 4);
  }
  // !(v >= th): v < th, and every v for a NaN threshold (LightGBM's `<= +inf`).
  __mmask16 left = _mm512_cmp_ps_mask(v, th, _CMP_NGE_UQ);
  if constexpr (kNan) {
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    left = static_cast<__mmask16>((left & ~nan) | (nan & _mm512_movepi32_mask(w)));
  }
  // next = 2 * pos + (left ? 0 : 1)
  const __m512i twice = _mm512_add_epi32(pos, pos);
  return _mm512_mask_add_epi32(twice, static_cast<__mmask16>(~left), twice, _mm512_set1_epi32(1));
}

// step() for a run-time level.
template <bool kNan>
COLLAGE_AVX512 inline __m512i step_at(int level, const int32_t* word, const float* threshold,
                                      const float* xb, __m512i pos) {
  switch (level) {
    case 0:
      return step<0, kNan>(0, word, threshold, xb, pos);
    case 1:
      return step<1, kNan>(1, word, threshold, xb, pos);
    case 2:
      return step<2, kNan>(2, word, threshold, xb, pos);
    case 3:
      return step<3, kNan>(3, word, threshold, xb, pos);
    case 4:
      return step<4, kNan>(4, word, threshold, xb, pos);
    case 5:
      return step<5, kNan>(5, word, threshold, xb, pos);
    case 6:
      return step<6, kNan>(6, word, threshold, xb, pos);
    case 7:
      return step<7, kNan>(7, word, threshold, xb, pos);
    default:
      return step<-1, kNan>(level, word, threshold, xb, pos);
  }
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
            step_at<kNan>(level, t.word + (tree + c) * n, t.threshold + (tree + c) * n, xb, pos[c]);
    for (int c = 0; c < kChains; ++c) {
      const __m512 leaf = _mm512_i32gather_ps(pos[c], t.leaf + (tree + c) * (n + 1), 4);
      float* a = acc + t.tree_output[tree + c] * kRows;
      _mm512_store_ps(a, _mm512_add_ps(_mm512_load_ps(a), leaf));
    }
  }
  for (; tree < s.trees; ++tree) {
    __m512i pos = _mm512_setzero_si512();
    for (int level = 0; level < depth; ++level)
      pos = step_at<kNan>(level, t.word + tree * n, t.threshold + tree * n, xb, pos);
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
