// A body of If, Loop or Scan in the dynamic module: a small plan of the module's own kernels over
// the body's values, run once per branch taken, iteration or step (dyn_control_flow.cpp). The
// compiler writes it (lib/backends/dynamic/dynamic_bodies.cpp); the bytes sit in the control-flow
// kernel's parameters (dyn_params.h, version 3), the values of its constants among the kernel's.
//
// Layout (little-endian): u32 magic "DYNB", u32 version (1), u32 value count, then per value an
// i64 dtype (collage_dtype_t), a list (its shape, -1 for a dimension known only at run time) and
// an i64 constant (the kernel constant holding it, -1 for none); the body's inputs and outputs
// (lists of value ids); u32 step count, then per step its node name, entry (u32 byte count and
// bytes each), its parameters (u32 byte count and the DYNP bytes of a kernel of this module), a
// list of value ids (inputs, then outputs) and an i64 input count. A list is a u32 count and
// that many i64.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace collage::rt_dynamic {

inline constexpr uint32_t kBodyMagic = 0x424E5944;  // "DYNB" read as a little-endian u32
inline constexpr uint32_t kBodyVersion = 1;

struct BodyValue {
  int32_t dtype = 0;
  std::vector<int64_t> shape;  // -1: known only at run time
  int64_t constant = -1;       // the kernel constant holding the value; -1: none
};

struct BodyStep {
  std::string name;   // the node's, for errors
  std::string entry;  // the module kernel's entry (an operator name)
  std::vector<uint8_t> params;
  std::vector<int64_t> args;  // value ids: inputs, then outputs
  int64_t num_inputs = 0;
};

struct Body {
  std::vector<BodyValue> values;
  std::vector<int64_t> inputs, outputs;  // value ids
  std::vector<BodyStep> steps;           // in execution order
};

std::vector<uint8_t> encode_body(const Body& body);
// Decodes and checks `body` against a kernel with `num_constants` constants: every id in range,
// each value given once (an input, a constant or one step's output) before a step reads it,
// every output given. Empty string on success, else what is wrong.
std::string decode_body(const uint8_t* data, size_t size, int32_t num_constants, Body* body);

}  // namespace collage::rt_dynamic
