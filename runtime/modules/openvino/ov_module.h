// The openvino runtime module: its C function table (include/collage/runtime_module.h), and what
// the compiler side uses in process: a region compiled from a model, and its record.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/runtime_module.h"
#include "ov_record.h"
#include "ov_region.h"

namespace collage::rt_openvino {

// The module's function table, in static storage. The shared library libcollage_rt_openvino
// exports it as collage_rt_module_v1_get; the compiler links the same code and calls it directly.
const collage_rt_module_v1_t* module_table();

// The argument types of a kernel descriptor (inputs, then outputs); throws RecordError.
std::vector<ArgType> argument_types(const collage_kernel_desc_t& desc);

// A region compiled from `model` for `threads` threads, as kernel_create compiles one from its
// record's IR (the variants for fewer threads are compiled from `model` too). Throws RecordError
// or ov::Exception.
std::unique_ptr<Region> compile_region(std::shared_ptr<const ov::Model> model, int32_t threads,
                                       std::vector<ArgType> args, size_t num_inputs);

// The weights pieces of the IR that are at least this large are looked for in the blob.
inline constexpr size_t kMinSharedBytes = 1024;

// The (offset, size) in the IR's weights of each constant of IR `xml` (its <data> elements).
std::vector<std::pair<uint64_t, uint64_t>> constant_ranges(std::string_view xml);

// What an artifact carries for a region: the header (the record's params) and its constants'
// bytes (ConstantIndex order; the blob empty when not exported). With a blob, the constants of
// the IR that the blob holds byte for byte are not in `weights` again (RecordHeader::weights).
struct RegionBytes {
  std::vector<uint8_t> params;
  std::string model_xml, weights, blob;
};
// `model` as IR and, with `export_blob`, `region`'s compiled model exported by this library.
// Throws ov::Exception.
RegionBytes region_bytes(const ov::Model& model, const Region& region, bool export_blob);

}  // namespace collage::rt_openvino
