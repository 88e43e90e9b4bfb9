// The TreeEnsemble kernel of the trees runtime module: the perfect-tree tables packed for the
// traversal loops, and the row-block loops (portable scalar and AVX-512).
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
// fastest this CPU has.
enum class Variant : int64_t { automatic = 0, scalar = 1, avx512 = 2 };

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
  // Node and threshold tables are padded by kPad entries so that the vector loops may load a
  // whole register from any level's start.
  static constexpr int64_t kPad = 32;
  std::vector<int32_t> word_;
  std::vector<float> threshold_, leaf_, base_;
  std::vector<int32_t> tree_output_;
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
};

// Rows [row_begin, row_end) of x into y.
void run_scalar(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
                int64_t row_end);
void run_avx512(const EnsembleTables& t, const float* x, float* y, int64_t row_begin,
                int64_t row_end);
// True when this CPU runs run_avx512 (AVX-512 F, BW, DQ, VL).
bool cpu_has_avx512();

}  // namespace collage::rt_trees
