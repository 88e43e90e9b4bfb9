// The ONNX importer fuzz target's body, shared by the libFuzzer build (fuzz/onnx_fuzzer.cpp) and
// the standalone replay driver that ctest runs (fuzz/onnx_replay.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace collage::fuzz {

// Takes `data` as the bytes of an ONNX model: imports it (giving symbolic input dimensions a size
// of 2, so that mutated models reach the operators), runs the graph passes and, when the graph is
// small, the reference executor on fixed inputs. Errors are expected; a crash, a sanitizer report
// or an internal error (a status with code Internal, which means the importer built a graph that
// does not verify) is a finding: the last aborts with its message.
// Returns how far the input got, for the replay driver's statistics; `why`, when given, receives
// the message of the error that stopped it (empty when it ran).
enum class Reached { refused, imported, passed, ran };
Reached run_onnx_input(const uint8_t* data, size_t size, std::string* why = nullptr);

}  // namespace collage::fuzz
