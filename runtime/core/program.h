// The decoded, validated contents of an artifact: tensors, constants, kernels and the graph's
// inputs and outputs. Every id and offset in a Program has been checked against its bounds, so
// the executor can index without checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collage/runtime_module.h"
#include "status.h"
#include "wave_schedule.h"

namespace collage::rt {

// dynamic: a shape known only at run time (-1 dimensions), allocated per run (format version 2).
enum class Storage : uint8_t { arena = 0, constant = 1, input = 2, output = 3, dynamic = 4 };

inline constexpr int32_t kMaxRank = 16;
// collage_dtype_t values are 0 .. kNumDTypes - 1, numbered as collage::DType (f32, f16, bf16, i8,
// i32, i64, bool, f64, i16, u8, u16, u32, u64, str). str (COLLAGE_DTYPE_STRING) elements are
// collage_string_t: a pointer and a length.
inline constexpr int32_t kNumDTypes = 14;
inline constexpr int32_t kStringDType = 13;

// Bytes of one element of a collage_dtype_t (valid dtypes only).
size_t dtype_size(int32_t dtype);
// "f32", "i64", ... (valid dtypes only).
const char* dtype_name(int32_t dtype);
// "f32[1x3x224x224]"
std::string type_string(int32_t dtype, std::span<const int64_t> shape);

struct TensorInfo {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;  // 0 for a dynamic tensor
  Storage storage = Storage::arena;
  uint64_t location = 0;  // arena: byte offset; constant: id; input/output: position
};

struct ConstantInfo {
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // in the constants section, 64-byte aligned
  uint64_t bytes = 0;
  // A string constant (format version 3): its table decoded, one collage_string_t per element
  // pointing into the constants section; `data` points at it. Shared so that copies of the
  // program keep `data` valid.
  std::shared_ptr<const std::vector<collage_string_t>> strings;
};

struct KernelInfo {
  std::string name;
  std::string backend;
  uint32_t module = 0;  // index into Program::modules
  std::string entry;
  std::span<const uint8_t> params;  // in the plan section
  std::vector<uint32_t> constants;
  std::vector<uint32_t> args;  // tensor ids: inputs, then outputs
  uint32_t num_inputs = 0;
  int32_t task_count = 1;
  bool dynamic = false;  // reads or writes a tensor of Storage::dynamic: runs kernel_run_dynamic
  bool strings = false;  // reads or writes a str tensor: runs kernel_run_strings (one task)
};

// A dynamic-batch artifact (docs/artifact-format.md#dynamic-batch): the range of batches a run
// may have and where each graph input and output keeps its batch.
struct DynamicBatch {
  int64_t min = 0, max = 0;             // max 0: the artifact has a fixed batch
  std::vector<int32_t> input_axes;      // per graph input: batch axis, -1 when not batched
  std::vector<int32_t> output_axes;     // per graph output: likewise
  bool padded = false;  // a batch without a plan runs on the next larger one, padded with zeros
};

struct Program {
  std::string graph_name;
  std::string producer;
  uint32_t format_version = 1;
  std::vector<std::string> modules;
  std::vector<TensorInfo> tensors;
  std::vector<ConstantInfo> constants;
  std::vector<KernelInfo> kernels;
  std::vector<uint32_t> inputs;   // tensor ids
  std::vector<uint32_t> outputs;  // tensor ids
  uint64_t arena_bytes = 0;
  std::span<const uint8_t> native_code;  // the embedded shared object; empty when there is none
  bool has_schedule = false;  // the plan carries a wave schedule (checked against the kernels)
  bool has_dynamic = false;   // some tensor has Storage::dynamic (its kernels run dynamically)
  bool has_strings = false;   // some tensor is a str tensor (format version 3)
  waves::WaveSchedule schedule;
  int64_t batch = 0;  // the batch this plan runs (dynamic batch; 0 otherwise)
  // Root plan of a dynamic-batch artifact: the range, and the plans of the smaller batches
  // (ascending; each with the root's inputs and outputs but for the batch size).
  DynamicBatch dynamic_batch;
  std::vector<Program> variants;
};

// Checks and decodes the artifact in `bytes` (which must stay alive, unchanged, as long as the
// Program): header, section table, every checksum, the plan's FlatBuffer structure, then every
// field, id, offset and size, the dataflow (a kernel reads only tensors written before it) and
// the memory plan (tensors alive at the same time never overlap). Errors are Code::corrupt
// naming the field, or Code::unsupported for a format or ABI version this runtime does not read.
Status decode_artifact(std::span<const uint8_t> bytes, Program* program);

}  // namespace collage::rt
