// The AVX2 TreeEnsemble loop (CPUs with AVX2 and no AVX-512): the AVX-512 loop's design in 8-lane
// registers. 8 rows per register (the row block transposed feature-major), eight trees walked at
// once so that their gathers overlap, level-order tables with the child step `2k + 2 - left`
// done as vector arithmetic. Node words and thresholds of the first levels (up to 32 nodes) are
// picked with in-register permutes and blends, x of the first four levels by blending whole
// feature rows; deeper levels, their x and the leaves are gathered. The ranks variant (see
// trees_kernel.h) replaces each x by its rank among the feature's thresholds first. Leaves are
// added in tree order, so the sums are exactly the scalar loop's.
#include "trees_kernel.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace collage::rt_trees {

bool cpu_has_avx2() {
  return __builtin_cpu_supports("avx2") != 0;
}

namespace {

constexpr int kRows = 8;    // lanes
constexpr int kChains = 8;  // trees in flight: their gathers overlap
// Levels whose x values come from whole feature rows blended per lane (1, 2, 4 or 8 loads)
// rather than a gather, and levels whose node tables (up to 32 entries: 4 permutes and 3 blends)
// are read with permutes rather than gathers.
constexpr int kRowLevels = 3;
constexpr int kPermuteLevels = 5;

#define COLLAGE_AVX2 __attribute__((target("avx2,fma"), always_inline))

COLLAGE_AVX2 inline __m256i bit_set(__m256i pos, int bit) {
  const __m256i b = _mm256_set1_epi32(1 << bit);
  return _mm256_cmpeq_epi32(_mm256_and_si256(pos, b), b);
}
COLLAGE_AVX2 inline __m256 blend(__m256i m, __m256 a, __m256 b) {
  return _mm256_blendv_ps(a, b, _mm256_castsi256_ps(m));
}
COLLAGE_AVX2 inline __m256i blend(__m256i m, __m256i a, __m256i b) {
  return _mm256_castps_si256(
      _mm256_blendv_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), _mm256_castsi256_ps(m)));
}

// v[i] per lane, for kCount (a power of two) vectors, i being the bits of pos from `first` up.
template <int kCount, typename V>
COLLAGE_AVX2 inline V select(const V* v, __m256i pos, int first) {
  if constexpr (kCount == 1) {
    return v[0];
  } else {
    const __m256i high = bit_set(pos, first + __builtin_ctz(kCount / 2));
    return blend(high, select<kCount / 2>(v, pos, first),
                 select<kCount / 2>(v + kCount / 2, pos, first));
  }
}

// Entry `pos` of one level's table (2^level entries from `table`), per lane: one permute for up
// to 8 entries, permutes and blends up to 2^kPermuteLevels, a gather beyond.
template <int kLevel>
COLLAGE_AVX2 inline __m256i lookup(const int32_t* table, __m256i pos) {
  if constexpr (kLevel <= 3) {
    return _mm256_permutevar8x32_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(table)),
                                       pos);
  } else if constexpr (kLevel <= kPermuteLevels) {
    constexpr int kParts = 1 << (kLevel - 3);
    __m256i part[kParts];
    for (int i = 0; i < kParts; ++i)
      part[i] = _mm256_permutevar8x32_epi32(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + 8 * i)), pos);
    return select<kParts>(part, pos, 3);
  } else {
    return _mm256_i32gather_epi32(table, pos, 4);
  }
}

// How node words are read (as in the AVX-512 loop).
struct WordLayout {
  int32_t feature_mask = 0x7fffffff;
  int32_t rank_shift = 31;
  int32_t rank_mask = 0;
};

// One level of one tree for 8 rows: `pos` is each row's position within the level; returns the
// position in the next level. kLevel is the level up to kPermuteLevels, else -1 (the level is
// then `level`, run time). Without kRanked, xb holds the rows' x (feature-major) and `threshold`
// the nodes' thresholds; with kRanked, xb holds each x's rank (int32, -1 for NaN) and the node
// words the thresholds' ranks.
template <int kLevel, bool kNan, bool kRanked>
COLLAGE_AVX2 inline __m256i step(int level, const int32_t* word, const float* threshold,
                                 const float* xb, const WordLayout& layout, __m256i pos) {
  const int off = (1 << level) - 1;
  __m256i w;
  __m256 th, v;
  if constexpr (kLevel >= 0) {
    w = lookup<kLevel>(word + off, pos);
    if constexpr (!kRanked)
      th = _mm256_castsi256_ps(
          lookup<kLevel>(reinterpret_cast<const int32_t*>(threshold) + off, pos));
  } else {
    w = _mm256_i32gather_epi32(word + off, pos, 4);
    if constexpr (!kRanked) th = _mm256_i32gather_ps(threshold + off, pos, 4);
  }
  if constexpr (kLevel >= 0 && kLevel <= kRowLevels) {
    __m256 rows[1 << kLevel];
    for (int i = 0; i < (1 << kLevel); ++i)
      rows[i] = _mm256_load_ps(xb + (word[off + i] & layout.feature_mask) * kRows);
    v = select<(1 << kLevel)>(rows, pos, 0);
  } else {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i feature = _mm256_and_si256(w, _mm256_set1_epi32(layout.feature_mask));
    v = _mm256_i32gather_ps(xb, _mm256_add_epi32(_mm256_slli_epi32(feature, 3), lane), 4);
  }
  __m256i left;  // all ones in the lanes that go left
  if constexpr (kRanked) {
    const __m256i rank = _mm256_and_si256(_mm256_srl_epi32(w, _mm_cvtsi32_si128(layout.rank_shift)),
                                          _mm256_set1_epi32(layout.rank_mask));
    const __m256i vi = _mm256_castps_si256(v);
    // x < threshold exactly when x's rank is at most the threshold's: !(vi > rank).
    left = _mm256_andnot_si256(_mm256_cmpgt_epi32(vi, rank), _mm256_set1_epi32(-1));
    if constexpr (kNan) {
      const __m256i nan = _mm256_cmpeq_epi32(vi, _mm256_set1_epi32(-1));
      left = blend(nan, left, _mm256_srai_epi32(w, 31));
    }
  } else {
    // !(v >= th): v < th, and every v for a NaN threshold (LightGBM's `<= +inf`).
    left = _mm256_castps_si256(_mm256_cmp_ps(v, th, _CMP_NGE_UQ));
    if constexpr (kNan) {
      const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
      left = blend(nan, left, _mm256_srai_epi32(w, 31));
    }
  }
  // next = 2 * pos + 1 - (left ? 1 : 0), left being -1 or 0
  const __m256i twice = _mm256_add_epi32(pos, pos);
  return _mm256_add_epi32(_mm256_add_epi32(twice, _mm256_set1_epi32(1)), left);
}

template <bool kNan, bool kRanked>
COLLAGE_AVX2 inline __m256i step_at(int level, const int32_t* word, const float* threshold,
                                    const float* xb, const WordLayout& layout, __m256i pos) {
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
    default:
      return step<-1, kNan, kRanked>(level, word, threshold, xb, layout, pos);
  }
}

template <bool kNan, bool kRanked>
__attribute__((target("avx2,fma"))) void walk_block(const EnsembleTables& t, const float* xb,
                                                    float* acc) {
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
    __m256i pos[kChains];
    for (int c = 0; c < kChains; ++c) pos[c] = _mm256_setzero_si256();
    for (int level = 0; level < depth; ++level)
      for (int c = 0; c < kChains; ++c)
        pos[c] = step_at<kNan, kRanked>(level, words + (tree + c) * n, t.threshold + (tree + c) * n,
                                        xb, layout, pos[c]);
    for (int c = 0; c < kChains; ++c) {
      const __m256 leaf = _mm256_i32gather_ps(t.leaf + (tree + c) * (n + 1), pos[c], 4);
      float* a = acc + t.tree_output[tree + c] * kRows;
      _mm256_store_ps(a, _mm256_add_ps(_mm256_load_ps(a), leaf));
    }
  }
  for (; tree < s.trees; ++tree) {
    __m256i pos = _mm256_setzero_si256();
    for (int level = 0; level < depth; ++level)
      pos =
          step_at<kNan, kRanked>(level, words + tree * n, t.threshold + tree * n, xb, layout, pos);
    const __m256 leaf = _mm256_i32gather_ps(t.leaf + tree * (n + 1), pos, 4);
    float* a = acc + t.tree_output[tree] * kRows;
    _mm256_store_ps(a, _mm256_add_ps(_mm256_load_ps(a), leaf));
  }
}

// One level of the binary search over a feature's thresholds: `pos` becomes 2 pos + (probe <= v).
template <int kLevel>
COLLAGE_AVX2 inline __m256i rank_step(int level, const float* table, __m256 v, __m256i pos) {
  const auto* probes = reinterpret_cast<const int32_t*>(table) + (1 << level) - 1;
  __m256 th;
  if constexpr (kLevel >= 0)
    th = _mm256_castsi256_ps(lookup<kLevel>(probes, pos));
  else
    th = _mm256_castsi256_ps(_mm256_i32gather_epi32(probes, pos, 4));
  const __m256i twice = _mm256_add_epi32(pos, pos);
  // Subtracting the all-ones mask adds 1 where probe <= v.
  return _mm256_sub_epi32(twice, _mm256_castps_si256(_mm256_cmp_ps(th, v, _CMP_LE_OQ)));
}

// Replaces each x of the block (feature-major) by its rank among the feature's thresholds; -1 for
// NaN.
__attribute__((target("avx2,fma"))) void rank_block(const EnsembleTables& t, float* xb) {
  for (int64_t f = 0; f < t.shape.features; ++f) {
    const __m256 v = _mm256_load_ps(xb + f * kRows);
    const float* table = t.bin_table + t.bin_offset[f];
    __m256i rank = _mm256_setzero_si256();
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
        default:
          rank = rank_step<-1>(level, table, v, rank);
      }
    }
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    rank = _mm256_or_si256(rank, nan);
    _mm256_store_si256(reinterpret_cast<__m256i*>(xb + f * kRows), rank);
  }
}

// Rows [row_begin, row_end) of x into y, by blocks of 8 rows.
template <bool kRanked>
__attribute__((target("avx2,fma"))) void run_blocks(const EnsembleTables& t, const float* x,
                                                    float* y, int64_t row_begin, int64_t row_end) {
  const EnsembleShape& s = t.shape;
  const auto features = static_cast<size_t>(s.features);
  const auto outputs = static_cast<size_t>(s.outputs);
  // The row block feature-major (xb[f * 8 + lane]) and the per-output sums, 32-byte aligned.
  std::vector<float> buffer(features * kRows + outputs * kRows + 8);
  float* xb =
      reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(buffer.data()) + 31) & ~uintptr_t{31});
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
      _mm256_store_ps(acc + o * kRows, _mm256_set1_ps(t.base[o]));
    if (nan)
      walk_block<true, kRanked>(t, xb, acc);
    else
      walk_block<false, kRanked>(t, xb, acc);
    float* out = y + r0 * s.outputs;
    for (int r = 0; r < rows; ++r)
      for (size_t o = 0; o < outputs; ++o)
        out[r * s.outputs + static_cast<int64_t>(o)] = acc[o * kRows + r];
  }
}

}  // namespace

void run_avx2(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
              int64_t row_end) {
  run_blocks<false>(t, x, y, row_begin, row_end);
}

void run_avx2_ranks(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
                    int64_t row_end) {
  run_blocks<true>(t, x, y, row_begin, row_end);
}

}  // namespace collage::rt_trees

#else

namespace collage::rt_trees {

bool cpu_has_avx2() {
  return false;
}

void run_avx2(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
              int64_t row_end) {
  run_scalar(t, x, y, row_begin, row_end);
}

void run_avx2_ranks(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
                    int64_t row_end) {
  run_scalar(t, x, y, row_begin, row_end);
}

}  // namespace collage::rt_trees

#endif
