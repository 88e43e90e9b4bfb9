// The kernel record of an OpenVINO region, as the compiler writes it and the module reads it:
// parameters (a small header) and constants (the region's model as OpenVINO IR, the part of its
// weights the compiled blob does not hold, and the compiled model OpenVINO exported, when there
// is one).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
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
  kWeights = 1,   // the bytes of the IR's weights (.bin) that the blob does not hold; may be empty
  kBlob = 2,      // present when RecordHeader::has_blob: CompiledModel::export_model's bytes
};

// A piece of the IR's weights: `size` bytes at `offset` of constant kWeights or kBlob. The CPU
// plugin's blob holds most constants of a region byte for byte (a region's BatchNorms are folded
// already), so the record carries them once, in the blob, and the IR's weights refer to them.
struct WeightSegment {
  int32_t source = kWeights;  // kWeights or kBlob
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct RecordHeader {
  int32_t num_threads = 1;  // the OpenVINO threads (INFERENCE_NUM_THREADS) it was compiled for
  bool has_blob = false;
  // The OpenVINO build number (ov::get_openvino_version().buildNumber) that exported the blob:
  // a library with another build number does not import it.
  std::string built_with;
  // The IR's weights, in order: the concatenation of these pieces.
  std::vector<WeightSegment> weights;
  // A record of format version 1 (no pieces): the kWeights constant is all of the IR's weights.
  // Read, never written.
  bool whole_weights = false;
};

std::vector<uint8_t> encode_header(const RecordHeader& header);
// Throws RecordError naming what is wrong.
RecordHeader decode_header(const uint8_t* params, size_t size);

// Throws RecordError for a weight piece outside its constant (or one in a blob the record lacks).
void check_weights(const RecordHeader& header, size_t residue_size, size_t blob_size);
// Whether the IR's weights are the kWeights bytes themselves (so they can be used in place).
bool weights_in_place(const RecordHeader& header, size_t residue_size);
// The IR's weights put together from `header.weights` over the kWeights bytes (`residue`) and the
// blob; throws as check_weights.
std::vector<uint8_t> assemble_weights(const RecordHeader& header, const uint8_t* residue,
                                      size_t residue_size, const uint8_t* blob, size_t blob_size);

// The weight pieces of IR weights `bin` (whose constants lie at `ranges`, (offset, size) pairs)
// given `blob`: each constant of at least `min_shared` bytes found byte for byte in the blob is a
// kBlob piece; the rest of `bin` goes, in order, into `*residue` as kWeights pieces.
std::vector<WeightSegment> share_weights(std::string_view bin,
                                         const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                                         std::string_view blob, size_t min_shared,
                                         std::string* residue);

}  // namespace collage::rt_openvino
