// The oneDNN (dnnl) backend: CPU kernels from oneDNN 2.x for convolutions, ConvTranspose, MatMul
// and Gemm with fused post-ops (bias, eltwise activations, sums and broadcast binary operations,
// unfolded batch normalisation), pooling, Softmax / LogSoftmax, LayerNormalization, standalone
// eltwise and binary operations and Concat, all f32 (Concat also i32 and i8). Kernels run through
// the `dnnl` runtime module (libcollage_rt_dnnl), whose code the compiler links in.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "collage/backend.h"

namespace collage {

inline constexpr std::string_view kDnnlBackend = "dnnl";

// A new dnnl backend (device cpu, version "onednn-<major.minor.patch>/1").
std::unique_ptr<Backend> make_dnnl_backend();

// Adds make_dnnl_backend() to `registry`; AlreadyExists when "dnnl" is taken.
absl::Status register_dnnl_backend(BackendRegistry& registry);

}  // namespace collage
