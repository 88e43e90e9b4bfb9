// Kernel parameters of the dnnl backend: the runtime module's parameter structs and constants
// for an analysed group, with constants still in plain layout (build packs them afterwards).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/dnnl/dnnl_group.h"
#include "collage/graph.h"
#include "dnnl_params.h"

namespace collage::dnnl_backend {

struct EmittedKernel {
  rt_dnnl::Header header;     // constant_layouts: one plain layout per constant
  std::vector<uint8_t> body;  // the kind's parameter struct
  std::vector<Tensor> constants;
};

// `group` is the group's standalone graph and `plan` its analysis; arguments are the graph's
// inputs then its output. `num_threads` goes into the header (0: OpenMP's default).
absl::StatusOr<EmittedKernel> emit_kernel(const Graph& group, const GroupPlan& plan,
                                          int num_threads);

// Header followed by body: the bytes of KernelRecord::params.
std::vector<uint8_t> serialize_params(rt_dnnl::Header& header, const std::vector<uint8_t>& body);

}  // namespace collage::dnnl_backend
