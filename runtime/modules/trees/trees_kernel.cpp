// TreeEnsemble kernels: descriptor checks, table packing (the rank tables included), variant
// dispatch and the portable scalar loop (several rows in flight per tree, branch-free child
// index arithmetic).
#include "trees_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace collage::rt_trees {
namespace {

std::string check_desc(const collage_kernel_desc_t& d, EnsembleShape& s, Variant& variant) {
  if (d.params_size != 6 * sizeof(int64_t))
    return "tree_ensemble: parameters of " + std::to_string(d.params_size) + " bytes, expected 48";
  int64_t p[6];
  for (int i = 0; i < 6; ++i) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = (v << 8) | d.params[i * 8 + b];
    p[i] = static_cast<int64_t>(v);
  }
  s = {p[0], p[1], p[2], p[3], p[4]};
  if (s.batch < 0 || s.features < 1 || s.trees < 0 || s.depth < 0 || s.depth > 30 ||
      s.outputs < 1 || p[5] < 0 || p[5] > static_cast<int64_t>(Variant::automatic_avx2))
    return "tree_ensemble: invalid parameters";
  variant = static_cast<Variant>(p[5]);
  const int64_t n = s.internal();
  auto is = [](const collage_tensor_desc_t& t, int32_t dtype, std::initializer_list<int64_t> dims) {
    if (t.dtype != dtype || t.rank != static_cast<int32_t>(dims.size())) return false;
    int i = 0;
    for (int64_t dim : dims)
      if (t.shape[i++] != dim) return false;
    return true;
  };
  if (d.num_args != 2 || d.num_inputs != 1 ||
      !is(d.args[0], COLLAGE_DTYPE_F32, {s.batch, s.features}) ||
      !is(d.args[1], COLLAGE_DTYPE_F32, {s.batch, s.outputs}))
    return "tree_ensemble: arguments must be X f32[" + std::to_string(s.batch) + "x" +
           std::to_string(s.features) + "] and Y f32[" + std::to_string(s.batch) + "x" +
           std::to_string(s.outputs) + "]";
  if (d.num_constants != 5 || !is(d.constant_descs[0], COLLAGE_DTYPE_I32, {s.trees, n}) ||
      !is(d.constant_descs[1], COLLAGE_DTYPE_F32, {s.trees, n}) ||
      !is(d.constant_descs[2], COLLAGE_DTYPE_F32, {s.trees, n + 1}) ||
      !is(d.constant_descs[3], COLLAGE_DTYPE_I32, {s.trees}) ||
      !is(d.constant_descs[4], COLLAGE_DTYPE_F32, {s.outputs}))
    return "tree_ensemble: constants must be word, threshold, leaf, tree_output and base tables "
           "of the parameters' shapes";
  return "";
}

}  // namespace

std::string EnsembleKernel::create(const collage_kernel_desc_t& desc, EnsembleKernel*& out) {
  EnsembleShape s;
  Variant variant = Variant::automatic;
  if (std::string e = check_desc(desc, s, variant); !e.empty()) return e;
  if ((variant == Variant::avx512 || variant == Variant::avx512_ranks) && !cpu_has_avx512())
    return "tree_ensemble: the avx512 variants need AVX-512 F/BW/DQ/VL, which this CPU lacks";
  if ((variant == Variant::avx2 || variant == Variant::avx2_ranks) && !cpu_has_avx2())
    return "tree_ensemble: the avx2 variants need AVX2, which this CPU lacks";
  const bool automatic = variant == Variant::automatic || variant == Variant::automatic_avx2;
  if (automatic) {
    // The widest loop this CPU (and the cap) allows; plain or ranked is decided below.
    if (variant == Variant::automatic && cpu_has_avx512())
      variant = Variant::avx512_ranks;
    else if (cpu_has_avx2())
      variant = Variant::avx2_ranks;
    else
      variant = Variant::scalar;
  }
  const int64_t n = s.internal();
  const auto* word = static_cast<const int32_t*>(desc.constants[0]);
  const auto* tree_output = static_cast<const int32_t*>(desc.constants[3]);
  for (int64_t i = 0; i < s.trees * n; ++i)
    if ((word[i] & 0x7fffffff) >= s.features)
      return "tree_ensemble: tree " + std::to_string(i / std::max<int64_t>(n, 1)) +
             " reads feature " + std::to_string(word[i] & 0x7fffffff) + " of " +
             std::to_string(s.features);
  for (int64_t t = 0; t < s.trees; ++t)
    if (tree_output[t] < 0 || tree_output[t] >= s.outputs)
      return "tree_ensemble: tree " + std::to_string(t) + " adds to output " +
             std::to_string(tree_output[t]) + " of " + std::to_string(s.outputs);
  auto* k = new EnsembleKernel;
  k->shape_ = s;
  k->pinned_ = !automatic;
  k->word_.assign(word, word + s.trees * n);
  k->word_.resize(k->word_.size() + kPad, 0);
  const auto* threshold = static_cast<const float*>(desc.constants[1]);
  k->threshold_.assign(threshold, threshold + s.trees * n);
  k->threshold_.resize(k->threshold_.size() + kPad, 0.f);
  const auto* leaf = static_cast<const float*>(desc.constants[2]);
  k->leaf_.assign(leaf, leaf + s.trees * (n + 1));
  k->tree_output_.assign(tree_output, tree_output + s.trees);
  const auto* base = static_cast<const float*>(desc.constants[4]);
  k->base_.assign(base, base + s.outputs);
  const bool want_ranks = variant == Variant::avx512_ranks || variant == Variant::avx2_ranks;
  const bool ranks = want_ranks && k->build_ranks();
  if (want_ranks && !ranks && !automatic) {
    delete k;
    return "tree_ensemble: the threshold ranks of some feature do not fit in a node word";
  }
  if (automatic && want_ranks) {
    // The ranks pay when the binary searches (one gather per step and feature, per block of
    // rows) cost less than the threshold lookups they save (one per tree and level).
    int64_t steps = 0;
    for (int32_t b : k->bin_steps_) steps += b;
    if (!ranks || 2 * steps > s.trees * s.depth)
      variant = variant == Variant::avx512_ranks ? Variant::avx512 : Variant::avx2;
  }
  k->variant_ = variant;
  out = k;
  return "";
}

bool EnsembleKernel::build_ranks() {
  const EnsembleShape& s = shape_;
  const int64_t n = s.internal();
  int32_t bits = 1;
  while ((int64_t{1} << bits) < s.features) ++bits;
  if (bits > 24) return false;
  const int32_t nan_rank = (int32_t{1} << (31 - bits)) - 1;
  std::vector<std::vector<float>> sorted(static_cast<size_t>(s.features));
  for (int64_t i = 0; i < s.trees * n; ++i)
    if (!std::isnan(threshold_[i])) sorted[word_[i] & 0x7fffffff].push_back(threshold_[i]);
  bin_table_.clear();
  bin_offset_.assign(static_cast<size_t>(s.features), 0);
  bin_steps_.assign(static_cast<size_t>(s.features), 0);
  for (size_t f = 0; f < sorted.size(); ++f) {
    std::vector<float>& t = sorted[f];
    std::sort(t.begin(), t.end());
    // -0 and +0 compare equal: one rank.
    t.erase(std::unique(t.begin(), t.end(), [](float a, float b) { return a == b; }), t.end());
    int32_t steps = 0;
    while ((size_t{1} << steps) < t.size() + 1) ++steps;
    // A row's rank is at most 2^steps - 1; it must stay below the rank of NaN thresholds. Past
    // a million distinct thresholds the table is not worth its memory.
    if (steps >= 31 - bits || steps > 20) return false;
    // The probes of a binary search over the 2^steps - 1 thresholds padded with +inf, in level
    // order: level l, position p probes threshold p * 2^(steps - l) + 2^(steps - l - 1) - 1.
    bin_offset_[f] = static_cast<int32_t>(bin_table_.size());
    bin_steps_[f] = steps;
    for (int32_t l = 0; l < steps; ++l)
      for (int64_t p = 0; p < (int64_t{1} << l); ++p) {
        const size_t i =
            static_cast<size_t>((p << (steps - l)) + (int64_t{1} << (steps - l - 1)) - 1);
        bin_table_.push_back(i < t.size() ? t[i] : std::numeric_limits<float>::infinity());
      }
  }
  // The permutes of the first levels read 16 or 32 entries from a level's start.
  bin_table_.resize(bin_table_.size() + kPad, 0.f);
  rank_word_.assign(word_.size(), 0);
  for (int64_t i = 0; i < s.trees * n; ++i) {
    const int32_t f = word_[i] & 0x7fffffff;
    const std::vector<float>& t = sorted[f];
    const float th = threshold_[i];
    const int32_t rank =
        std::isnan(th) ? nan_rank
                       : static_cast<int32_t>(std::lower_bound(t.begin(), t.end(), th) - t.begin());
    rank_word_[i] =
        static_cast<int32_t>(static_cast<uint32_t>(word_[i]) & 0x80000000u) | (rank << bits) | f;
  }
  feature_bits_ = bits;
  return true;
}

void EnsembleKernel::run(void* const* args, int64_t begin, int64_t end) const {
  const EnsembleTables t{
      shape_,       word_.data(),      threshold_.data(), leaf_.data(),       tree_output_.data(),
      base_.data(), rank_word_.data(), bin_table_.data(), bin_offset_.data(), bin_steps_.data(),
      feature_bits_};
  const auto* x = static_cast<const float*>(args[0]);
  auto* y = static_cast<float*>(args[1]);
  const int64_t row_begin = begin * kRowsPerUnit;
  const int64_t row_end = std::min(end * kRowsPerUnit, shape_.batch);
  if (variant_ == Variant::scalar || (!pinned_ && row_end - row_begin < kMinVectorRows))
    run_scalar(t, x, y, row_begin, row_end);
  else if (variant_ == Variant::avx512_ranks)
    run_avx512_ranks(t, x, y, row_begin, row_end);
  else if (variant_ == Variant::avx512)
    run_avx512(t, x, y, row_begin, row_end);
  else if (variant_ == Variant::avx2_ranks)
    run_avx2_ranks(t, x, y, row_begin, row_end);
  else
    run_avx2(t, x, y, row_begin, row_end);
}

void run_scalar(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
                int64_t row_end) {
  constexpr int64_t kLanes = 8;  // rows walked together: independent chains for the CPU
  const EnsembleShape& s = t.shape;
  const int64_t n = s.internal();
  for (int64_t r0 = row_begin; r0 < row_end; r0 += kLanes) {
    const int64_t rows = std::min(kLanes, row_end - r0);
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(y + (r0 + r) * s.outputs, t.base, sizeof(float) * s.outputs);
    for (int64_t tree = 0; tree < s.trees; ++tree) {
      const int32_t* word = t.word + tree * n;
      const float* threshold = t.threshold + tree * n;
      int64_t node[kLanes] = {};
      for (int64_t level = 0; level < s.depth; ++level)
        for (int64_t r = 0; r < rows; ++r) {
          const int32_t w = word[node[r]];
          const float v = x[(r0 + r) * s.features + (w & 0x7fffffff)];
          // NaN goes left when the node's sign bit (nan_left) is set; any other x when
          // !(x >= threshold), which a NaN threshold (LightGBM's `<= +inf`) always passes.
          const bool left = v != v ? w < 0 : !(v >= threshold[node[r]]);
          node[r] = 2 * node[r] + 2 - static_cast<int64_t>(left);
        }
      const float* leaf = t.leaf + tree * (n + 1);
      float* out = y + r0 * s.outputs + t.tree_output[tree];
      for (int64_t r = 0; r < rows; ++r) out[r * s.outputs] += leaf[node[r] - n];
    }
  }
}

}  // namespace collage::rt_trees
