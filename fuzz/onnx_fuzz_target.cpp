// The ONNX importer fuzz target: import, passes and a bounded reference run of one model.
#include "onnx_fuzz_target.h"

#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "collage/graph_stats.h"
#include "collage/onnx.h"
#include "collage/passes.h"
#include "collage/reference.h"

namespace collage::fuzz {
namespace {

// What the reference executor may be given: mutated models easily ask for huge or slow graphs,
// which are a matter of resources, not bugs. Small, because the reference kernels are plain loops
// that run several times slower sanitized and instrumented: the bugs they can have (indexing,
// broadcasting, edge shapes) show on tiny tensors as well as on large ones.
constexpr int64_t kMaxRunBytes = int64_t{4} << 20;  // all values of the graph together
constexpr int64_t kMaxRunFlops = 5'000'000;
constexpr size_t kMaxRunNodes = 500;
constexpr int64_t kSymbolicDim = 2;
// The importer and the constant folding pass evaluate nodes up to this size (the compiler's
// default is 64 MB): the shrunk real models rebuild every weight with ConstantOfShape, and
// evaluating them all (98 MB for ResNet-50: page faults and fills, then batch-norm folding over
// them) took most of the time per input; at 256 KB, filling them still took a sixth of the
// sanitized fuzzer's time (every element store instrumented). Folding still runs on every
// smaller node, and the reference executor runs what stays unfolded.
constexpr size_t kMaxFoldedBytes = size_t{32} << 10;

[[noreturn]] void finding(const char* stage, const absl::Status& s) {
  std::fprintf(stderr, "onnx fuzz finding: %s returned an internal error: %s\n", stage,
               std::string(s.message()).c_str());
  std::abort();
}

void check(const char* stage, const absl::Status& s) {
  if (s.code() == absl::StatusCode::kInternal) finding(stage, s);
  if (!s.ok() && s.message().empty()) {
    std::fprintf(stderr, "onnx fuzz finding: %s failed without a message\n", stage);
    std::abort();
  }
}

// Shapes for the graph inputs whose dimensions the model leaves open, so that a mutated model
// is not refused before its nodes are reached.
OnnxImportOptions options_for(std::span<const uint8_t> bytes) {
  OnnxImportOptions options;
  options.max_folded_bytes = kMaxFoldedBytes;
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return options;
  for (const onnx::ValueInfoProto& vi : model.graph().input()) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) continue;
    const auto& dims = vi.type().tensor_type().shape().dim();
    bool open = false;
    Shape shape;
    for (const auto& d : dims) {
      const bool fixed = d.has_dim_value() && d.dim_value() >= 0;
      open = open || !fixed;
      shape.push_back(fixed ? d.dim_value() : kSymbolicDim);
    }
    if (open && shape.size() <= 8) options.input_shapes.emplace(vi.name(), shape);
  }
  return options;
}

// Small deterministic values: indices stay near the low end of any axis.
Tensor input_for(const TensorType& type) {
  Tensor t(type.dtype, type.shape);
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    switch (type.dtype) {
      case DType::f32:
        t.data<float>()[i] = static_cast<float>(i % 11 - 5) / 4.0f;
        break;
      case DType::f16:
        t.data<uint16_t>()[i] = float_to_half(static_cast<float>(i % 7) / 8.0f);
        break;
      case DType::bf16:
        t.data<uint16_t>()[i] = float_to_bfloat16(static_cast<float>(i % 7) / 8.0f);
        break;
      case DType::i8:
        t.data<int8_t>()[i] = static_cast<int8_t>(i % 3);
        break;
      case DType::i32:
        t.data<int32_t>()[i] = static_cast<int32_t>(i % 3);
        break;
      case DType::i64:
        t.data<int64_t>()[i] = i % 3;
        break;
      case DType::boolean:
        t.data<uint8_t>()[i] = static_cast<uint8_t>(i % 2);
        break;
      default:
        break;  // other types stay zero
    }
  }
  return t;
}

bool small_enough(const Graph& g) {
  if (g.nodes().size() > kMaxRunNodes) return false;
  int64_t bytes = 0;
  for (const Value& v : g.values()) {
    const auto n = checked_shape_numel(v.type.shape);
    // Checked before multiplying: a dimension near INT64_MAX would overflow the byte count.
    if (!n || *n > kMaxRunBytes) return false;
    bytes += *n * static_cast<int64_t>(dtype_size(v.type.dtype));
    if (bytes > kMaxRunBytes) return false;
  }
  return graph_stats(g).flops <= kMaxRunFlops;
}

}  // namespace

Reached run_onnx_input(const uint8_t* data, size_t size, std::string* why) {
  // Built once: registering every operator took a quarter of an execution (more under ASan), and
  // the importer and the passes only read the registry.
  static const Context ctx;
  const std::span<const uint8_t> bytes(data, size);
  auto imported = import_onnx_buffer(ctx, bytes, options_for(bytes));
  check("import_onnx_buffer", imported.status());
  auto stopped = [why](const absl::Status& s, Reached r) {
    if (why) *why = std::string(s.message());
    return r;
  };
  if (!imported.ok()) return stopped(imported.status(), Reached::refused);
  PassOptions passes;
  passes.max_folded_bytes = kMaxFoldedBytes;
  auto g = run_passes(ctx, *imported, passes);
  check("run_passes", g.status());
  if (!g.ok()) return stopped(g.status(), Reached::imported);
  if (!small_enough(*g)) return Reached::passed;
  std::vector<Tensor> inputs;
  for (ValueId in : g->inputs()) inputs.push_back(input_for(g->value(in).type));
  auto outputs = run_reference(*g, inputs);
  if (!outputs.ok() && outputs.status().message().empty()) check("run_reference", outputs.status());
  return Reached::ran;
}

}  // namespace collage::fuzz
