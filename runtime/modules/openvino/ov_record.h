// The kernel record of an OpenVINO region, as the compiler writes it and the module reads it:
// parameters (a small header) and constants (the region's model as OpenVINO IR, its weights, and
// the compiled model OpenVINO exported, when there is one).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace collage::rt_openvino {

// A malformed record or descriptor (the module reports it as the kernel's error).
class RecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The kernel entry of every region.
inline constexpr const char* kRegionEntry = "region";

// The record's constants, in this order (each a 1-D i8 tensor of bytes).
enum ConstantIndex : int32_t {
  kModelXml = 0,  // the region as OpenVINO IR (XML), read when the blob cannot be used
  kWeights = 1,   // the IR's weights (.bin); may hold no bytes
  kBlob = 2,      // present when RecordHeader::has_blob: CompiledModel::export_model's bytes
};

struct RecordHeader {
  int32_t num_threads = 1;  // the OpenVINO threads (INFERENCE_NUM_THREADS) it was compiled for
  bool has_blob = false;
  // The OpenVINO build number (ov::get_openvino_version().buildNumber) that exported the blob:
  // a library with another build number does not import it.
  std::string built_with;
};

std::vector<uint8_t> encode_header(const RecordHeader& header);
// Throws RecordError naming what is wrong.
RecordHeader decode_header(const uint8_t* params, size_t size);

}  // namespace collage::rt_openvino
