// The dnnl runtime module: its C function table (include/collage/runtime_module.h) and the probe
// the compiler side uses in process to learn the layouts a kernel's primitives want.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collage/runtime_module.h"
#include "dnnl_params.h"

namespace collage::rt_dnnl {

// The module's function table, in static storage. The shared library libcollage_rt_dnnl exports
// it as collage_rt_module_v1_get; the compiler links the same code and calls this directly.
const collage_rt_module_v1_t* module_table();

// A constant in the layout the kernel's primitive prefers.
struct PackedConstant {
  int32_t index = 0;
  Layout layout;
  std::vector<uint8_t> bytes;
};

struct ProbeResult {
  std::string error;                         // empty on success
  std::vector<PackedConstant> packed;        // constants the kernel had to reorder
  std::vector<std::string> implementations;  // oneDNN implementation of each step
};

// Creates the kernel `desc` describes exactly as kernel_create does, reports what it found, and
// destroys it. Never throws.
ProbeResult probe_kernel(const collage_kernel_desc_t& desc);

// Whether oneDNN's 8-bit contractions sum u8 x s8 products exactly on this CPU: with VNNI
// (AVX-512 VNNI, AVX-VNNI) or AMX. Without it (AVX2, AVX-512 without VNNI, or oneDNN capped there
// by ONEDNN_MAX_CPU_ISA) its kernels add pairs of products in 16 bits (vpmaddubsw), which
// saturate: wrong sums, not an error. `isa` receives oneDNN's effective ISA's name.
bool int8_sums_exact(std::string* isa = nullptr);

}  // namespace collage::rt_dnnl
