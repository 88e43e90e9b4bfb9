// libFuzzer target for the ONNX importer (import_onnx_buffer), the graph passes and the reference
// executor: each input is the bytes of an ONNX model. Mutations are structure-aware three times
// in four (fuzz/onnx_mutator.h: operator types, attributes, wiring, shapes, initializers, opsets,
// and nodes spliced in from other inputs) and libFuzzer's byte-level ones otherwise. A crash, a
// sanitizer report, a hang or an internal error is a finding (fuzz/onnx_fuzz_target.h). Built
// and run by fuzz/run_fuzzer.sh (FUZZ_TARGET=onnx); ctest runs the same code briefly through
// fuzz/onnx_replay.cpp.
#include <cstring>
#include <string>

#include "onnx_fuzz_target.h"
#include "onnx_mutator.h"

// libFuzzer's byte-level mutator (the replay driver brings its own).
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// Writes `model` into `data` when it fits; 0 otherwise.
size_t store(const onnx::ModelProto& model, uint8_t* data, size_t max_size) {
  std::string bytes;
  if (!model.SerializeToString(&bytes) || bytes.size() > max_size) return 0;
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  collage::fuzz::run_onnx_input(data, size);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  collage::fuzz::Rng rng(seed);
  onnx::ModelProto model;
  if (rng() % 4 != 0 && model.ParseFromArray(data, static_cast<int>(size))) {
    collage::fuzz::mutate_model(model, rng);
    if (size_t n = store(model, data, max_size)) return n;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1,
                                            const uint8_t* data2, size_t size2, uint8_t* out,
                                            size_t max_out_size, unsigned int seed) {
  collage::fuzz::Rng rng(seed);
  onnx::ModelProto model, donor;
  if (!model.ParseFromArray(data1, static_cast<int>(size1)) ||
      !donor.ParseFromArray(data2, static_cast<int>(size2)))
    return 0;
  collage::fuzz::cross_models(model, donor, rng);
  return store(model, out, max_out_size);
}
