// The AVX-512 TreeEnsemble loop: 16 rows per register (one lane per row, the row block transposed
// feature-major), eight trees walked at once so that their gathers overlap, level-order tables
// with the child step `2k + 2 - left` done as vector arithmetic. The first eight levels (up to
// 128 nodes) pick node words and thresholds with in-register permutes and blends, the first
// four read x by blending whole feature rows; only deeper levels, x below level 4 and the
// leaves are gathered. The ranks variant first replaces each x of the block by its rank among the
// feature's thresholds (a binary search laid out like a tree level by level, so it walks with the
// same permutes), and the walk then compares integer ranks held in the node words, reading no
// threshold table. Leaves are added in tree order, so the sums are exactly the scalar loop's.
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

constexpr int kRows = 16;  // lanes
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

// How node words are read: the feature in the bits of feature_mask and, with ranks, the
// threshold's rank in the bits of rank_mask above them (nan_left is bit 31 either way).
struct WordLayout {
  int32_t feature_mask = 0x7fffffff;
  int32_t rank_shift = 31;
  int32_t rank_mask = 0;
};

// One level of one tree for 16 rows: `pos` is each row's position within the level (0..2^l-1);
// returns the position in the next level. kLevel is the level when it is below 8, else -1 (the
// level is then `level`, run time). Without kRanked, xb holds the rows' x (feature-major) and
// `threshold` the nodes' thresholds; with kRanked, xb holds each x's rank among its feature's
// thresholds (int32, -1 for NaN) and the node words the thresholds' ranks.
template <int kLevel, bool kNan, bool kRanked>
COLLAGE_AVX512 inline __m512i step(int level, const int32_t* word, const float* threshold,
                                   const float* xb, const WordLayout& layout, __m512i pos) {
  const int off = (1 << level) - 1;
  __m512i w;
  __m512 th, v;
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  if constexpr (kLevel >= 0) {
    w = lookup<kLevel>(word + off, pos);
    if constexpr (!kRanked)
      th = _mm512_castsi512_ps(
          lookup<kLevel>(reinterpret_cast<const int32_t*>(threshold) + off, pos));
  } else {
    w = _mm512_i32gather_epi32(pos, word + off, 4);
    if constexpr (!kRanked) th = _mm512_i32gather_ps(pos, threshold + off, 4);
  }
  if constexpr (kLevel >= 0 && kLevel <= kRowLevels) {
    // Few nodes: load each node's whole feature row and blend, instead of gathering.
    __m512 rows[1 << kLevel];
    for (int i = 0; i < (1 << kLevel); ++i)
      rows[i] = _mm512_load_ps(xb + (word[off + i] & layout.feature_mask) * kRows);
    v = select<(1 << kLevel)>(rows, pos, 0);
  } else {
    const __m512i feature = _mm512_and_si512(w, _mm512_set1_epi32(layout.feature_mask));
    v = _mm512_i32gather_ps(_mm512_add_epi32(_mm512_slli_epi32(feature, 4), lane), xb, 4);
  }
  __mmask16 left, nan;
  if constexpr (kRanked) {
    // x < threshold exactly when x's rank (thresholds <= x) is at most the threshold's rank;
    // a NaN threshold has a rank above every x's.
    const __m512i rank = _mm512_and_si512(_mm512_srl_epi32(w, _mm_cvtsi32_si128(layout.rank_shift)),
                                          _mm512_set1_epi32(layout.rank_mask));
    const __m512i vi = _mm512_castps_si512(v);
    left = _mm512_cmple_epi32_mask(vi, rank);
    if constexpr (kNan) nan = _mm512_cmpeq_epi32_mask(vi, _mm512_set1_epi32(-1));
  } else {
    // !(v >= th): v < th, and every v for a NaN threshold (LightGBM's `<= +inf`).
    left = _mm512_cmp_ps_mask(v, th, _CMP_NGE_UQ);
    if constexpr (kNan) nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  }
  if constexpr (kNan)
    left = static_cast<__mmask16>((left & ~nan) | (nan & _mm512_movepi32_mask(w)));
  // next = 2 * pos + (left ? 0 : 1)
  const __m512i twice = _mm512_add_epi32(pos, pos);
  return _mm512_mask_add_epi32(twice, static_cast<__mmask16>(~left), twice, _mm512_set1_epi32(1));
}

// step() for a run-time level.
template <bool kNan, bool kRanked>
COLLAGE_AVX512 inline __m512i step_at(int level, const int32_t* word, const float* threshold,
                                      const float* xb, const WordLayout& layout, __m512i pos) {
  switch (level) {
    case 0:
      return step<0, kNan, kRanked>(0, word, threshold, xb, layout, pos);
    case 1:
      return step<1, kNan, kRanked>(1, word, threshold, xb, layout, pos);
    case 2:
      return step<2, kNan, kRanked>(2, word, threshold, xb, layout, pos);
    case 3:
      return step<3, kNan, kRanked>(3, word, threshold, xb, layout, pos);
    case 4:
      return step<4, kNan, kRanked>(4, word, threshold, xb, layout, pos);
    case 5:
      return step<5, kNan, kRanked>(5, word, threshold, xb, layout, pos);
    case 6:
      return step<6, kNan, kRanked>(6, word, threshold, xb, layout, pos);
    case 7:
      return step<7, kNan, kRanked>(7, word, threshold, xb, layout, pos);
    default:
      return step<-1, kNan, kRanked>(level, word, threshold, xb, layout, pos);
  }
}

template <bool kNan, bool kRanked>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void walk_block(
    const EnsembleTables& t, const float* xb, float* acc) {
  const EnsembleShape& s = t.shape;
  const int64_t n = s.internal();
  const int depth = static_cast<int>(s.depth);
  const int32_t* words = kRanked ? t.rank_word : t.word;
  WordLayout layout;
  if constexpr (kRanked) {
    layout.feature_mask = (int32_t{1} << t.feature_bits) - 1;
    layout.rank_shift = t.feature_bits;
    layout.rank_mask = (int32_t{1} << (31 - t.feature_bits)) - 1;
  }
  int64_t tree = 0;
  for (; tree + kChains <= s.trees; tree += kChains) {
    __m512i pos[kChains];
    for (int c = 0; c < kChains; ++c) pos[c] = _mm512_setzero_si512();
    for (int level = 0; level < depth; ++level)
      for (int c = 0; c < kChains; ++c)
        pos[c] = step_at<kNan, kRanked>(level, words + (tree + c) * n, t.threshold + (tree + c) * n,
                                        xb, layout, pos[c]);
    for (int c = 0; c < kChains; ++c) {
      const __m512 leaf = _mm512_i32gather_ps(pos[c], t.leaf + (tree + c) * (n + 1), 4);
      float* a = acc + t.tree_output[tree + c] * kRows;
      _mm512_store_ps(a, _mm512_add_ps(_mm512_load_ps(a), leaf));
    }
  }
  for (; tree < s.trees; ++tree) {
    __m512i pos = _mm512_setzero_si512();
    for (int level = 0; level < depth; ++level)
      pos =
          step_at<kNan, kRanked>(level, words + tree * n, t.threshold + tree * n, xb, layout, pos);
    const __m512 leaf = _mm512_i32gather_ps(pos, t.leaf + tree * (n + 1), 4);
    float* a = acc + t.tree_output[tree] * kRows;
    _mm512_store_ps(a, _mm512_add_ps(_mm512_load_ps(a), leaf));
  }
}

// One level of the binary search over a feature's thresholds (the probes in level order, a
// perfect tree): `pos` becomes 2 pos + (probe <= v). kLevel is the level below 8, else -1.
template <int kLevel>
COLLAGE_AVX512 inline __m512i rank_step(int level, const float* table, __m512 v, __m512i pos) {
  const auto* probes = reinterpret_cast<const int32_t*>(table) + (1 << level) - 1;
  __m512 th;
  if constexpr (kLevel >= 0)
    th = _mm512_castsi512_ps(lookup<kLevel>(probes, pos));
  else
    th = _mm512_castsi512_ps(_mm512_i32gather_epi32(pos, probes, 4));
  const __m512i twice = _mm512_add_epi32(pos, pos);
  return _mm512_mask_add_epi32(twice, _mm512_cmp_ps_mask(th, v, _CMP_LE_OQ), twice,
                               _mm512_set1_epi32(1));
}

// Replaces each x of the block (feature-major) by its rank among the feature's thresholds, the
// number of them <= x (a binary search whose probes of the first eight levels are permutes, the
// deeper ones gathers); -1 for NaN.
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void rank_block(
    const EnsembleTables& t, float* xb) {
  for (int64_t f = 0; f < t.shape.features; ++f) {
    const __m512 v = _mm512_load_ps(xb + f * kRows);
    const float* table = t.bin_table + t.bin_offset[f];
    __m512i rank = _mm512_setzero_si512();
    for (int32_t level = 0; level < t.bin_steps[f]; ++level) {
      switch (level) {
        case 0:
          rank = rank_step<0>(level, table, v, rank);
          break;
        case 1:
          rank = rank_step<1>(level, table, v, rank);
          break;
        case 2:
          rank = rank_step<2>(level, table, v, rank);
          break;
        case 3:
          rank = rank_step<3>(level, table, v, rank);
          break;
        case 4:
          rank = rank_step<4>(level, table, v, rank);
          break;
        case 5:
          rank = rank_step<5>(level, table, v, rank);
          break;
        case 6:
          rank = rank_step<6>(level, table, v, rank);
          break;
        case 7:
          rank = rank_step<7>(level, table, v, rank);
          break;
        default:
          rank = rank_step<-1>(level, table, v, rank);
      }
    }
    rank =
        _mm512_mask_mov_epi32(rank, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(-1));
    _mm512_store_si512(xb + f * kRows, rank);
  }
}

// Rows [row_begin, row_end) of x into y, by blocks of 16 rows.
template <bool kRanked>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void run_blocks(
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
    if constexpr (kRanked) rank_block(t, xb);
    for (size_t o = 0; o < outputs; ++o)
      _mm512_store_ps(acc + o * kRows, _mm512_set1_ps(t.base[o]));
    if (nan)
      walk_block<true, kRanked>(t, xb, acc);
    else
      walk_block<false, kRanked>(t, xb, acc);
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

}  // namespace

void run_avx512(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
                int64_t row_end) {
  run_blocks<false>(t, x, y, row_begin, row_end);
}

void run_avx512_ranks(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
                      int64_t row_end) {
  run_blocks<true>(t, x, y, row_begin, row_end);
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

void run_avx512_ranks(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
                      int64_t row_end) {
  run_scalar(t, x, y, row_begin, row_end);
}

}  // namespace collage::rt_trees

#endif
