// The trees backend (CPU): runs the TreeEnsemble operator (include/collage/ops/trees.h, the fused
// tree strategy) as one kernel of the trees runtime module (libcollage_rt_trees, whose code is
// linked in, so the compiler measures what an artifact runs): rows blocked 16 to a vector
// register, eight trees walked at once, node tables in level order with the child index computed
// branch-free; AVX-512 or AVX2 where the CPU has it, a portable loop elsewhere. Pattern:
//   trees.ensemble  TreeEnsemble whose tables (every input but X) are constants
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "collage/backend.h"

namespace collage {

inline constexpr std::string_view kTreesBackend = "trees";

// Which traversal loop the kernels use; `automatic` takes the fastest the CPU has when the
// artifact runs (AVX-512, else AVX2, else scalar), capped at AVX2 when BuildOptions::target names
// a CPU without AVX-512. Pinning one lets a bench measure each (build fails for a loop the CPU
// lacks). avx512 and avx2 compare x with the node thresholds; their _ranks forms turn each x into
// its rank among the feature's thresholds first, so the walk reads one node table instead of two
// (automatic takes them for ensembles whose trees outweigh those binary searches).
enum class TreesKernelVariant : uint8_t {
  automatic,
  scalar,
  avx512,
  avx512_ranks,
  avx2,
  avx2_ranks
};
// "auto", "scalar", "avx512", "avx512_ranks", "avx2", "avx2_ranks"
std::string_view trees_kernel_variant_name(TreesKernelVariant v);

struct TreesBackendOptions {
  TreesKernelVariant variant = TreesKernelVariant::automatic;
};

// A new trees backend (name "trees", device cpu).
std::unique_ptr<Backend> make_trees_backend(const TreesBackendOptions& options = {});
// Adds make_trees_backend() to `registry`; AlreadyExists when "trees" is registered.
absl::Status register_trees_backend(BackendRegistry& registry);

}  // namespace collage
