// The TreeEnsemble kernel of the trees runtime module: the perfect-tree tables packed for the
// traversal loops, and the row-block loops (portable scalar, AVX2 and AVX-512).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collage/runtime_module.h"

namespace collage::rt_trees {

inline constexpr const char* kEntryEnsemble = "tree_ensemble";
// Rows per unit of work (one task runs whole units).
inline constexpr int64_t kRowsPerUnit = 64;

// Which traversal loop runs; the compiler may pin one (to measure each), the default takes the
// fastest this CPU has. avx512 (16 rows per register) and avx2 (8) compare x with the
// thresholds; their _ranks forms first turn each x into its rank among the feature's thresholds
// (a binary search per block of rows), so that the walk reads one table (node words holding the
// threshold's rank) instead of two. automatic_avx2 is automatic capped at AVX2: what an artifact
// compiled for an AVX2 target runs, whatever the CPU it runs on.
enum class Variant : int64_t {
  automatic = 0,
  scalar = 1,
  avx512 = 2,
  avx512_ranks = 3,
  avx2 = 4,
  avx2_ranks = 5,
  automatic_avx2 = 6,
};

// params: six little-endian int64 (batch, features, trees, depth, outputs, variant).
// constants: word i32 [T, N] (feature | nan_left << 31), threshold f32 [T, N], leaf f32 [T, N+1],
// tree_output i32 [T], base f32 [O], with N = 2^depth - 1. args: X f32 [batch, features], Y f32
// [batch, outputs].
struct EnsembleShape {
  int64_t batch = 0, features = 0, trees = 0, depth = 0, outputs = 0;
  int64_t internal() const { return (int64_t{1} << depth) - 1; }
};

class EnsembleKernel {
 public:
  // Validates the descriptor and packs the tables; returns an error message or "".
  static std::string create(const collage_kernel_desc_t& desc, EnsembleKernel*& out);

  int64_t units() const { return (shape_.batch + kRowsPerUnit - 1) / kRowsPerUnit; }
  // Rows [begin * kRowsPerUnit, end * kRowsPerUnit) of X into Y.
  void run(void* const* args, int64_t begin, int64_t end) const;

 private:
  EnsembleShape shape_;
  Variant variant_ = Variant::scalar;
  // With the automatic variant, calls of fewer rows than this take the scalar loop: one row walked
  // in 16 lanes measured 2-3x slower than the scalar walk (batch 1).
  static constexpr int64_t kMinVectorRows = 4;
  bool pinned_ = false;
  // Builds the rank tables; false when some rank does not fit in a node word beside the feature.
  bool build_ranks();
  // Node and threshold tables are padded by kPad entries so that the vector loops may load a
  // whole register from any level's start.
  static constexpr int64_t kPad = 32;
  std::vector<int32_t> word_;
  std::vector<float> threshold_, leaf_, base_;
  std::vector<int32_t> tree_output_;
  // The _ranks variants: each feature's distinct non-NaN thresholds sorted ascending, padded with
  // +inf to 2^steps - 1 and laid out as the probes of a binary search in level order (feature f's
  // from bin_offset_[f], bin_steps_[f] levels), and node words
  // nan_left << 31 | rank << feature_bits_ | feature, the rank of a NaN threshold (always left)
  // being the largest that fits.
  std::vector<int32_t> rank_word_;
  std::vector<float> bin_table_;
  std::vector<int32_t> bin_offset_, bin_steps_;
  int32_t feature_bits_ = 0;
  friend struct EnsembleTables;
};

// What the loops read (shared by the scalar and vector files).
struct EnsembleTables {
  EnsembleShape shape;
  const int32_t* word;
  const float* threshold;
  const float* leaf;
  const int32_t* tree_output;
  const float* base;
  // The _ranks variants only (see EnsembleKernel).
  const int32_t* rank_word;
  const float* bin_table;
  const int32_t* bin_offset;
  const int32_t* bin_steps;
  int32_t feature_bits;
};

// Rows [row_begin, row_end) of x into y.
void run_scalar(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
                int64_t row_end);
void run_avx512(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
                int64_t row_end);
void run_avx512_ranks(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
                      int64_t row_end);
void run_avx2(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
              int64_t row_end);
void run_avx2_ranks(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
                    int64_t row_end);
// True when this CPU runs run_avx512 (AVX-512 F, BW, DQ, VL).
bool cpu_has_avx512();
// True when this CPU runs run_avx2.
bool cpu_has_avx2();

}  // namespace collage::rt_trees
