// infer_output_types: operator shape inference, with dynamic input dimensions probed.
#include <array>
#include <optional>

#include "collage/op.h"
#include "core/shape_limit.h"
#include "core/str_cat.h"

namespace collage {
namespace {

// Sizes standing in for dynamic dimensions: divisible by every number up to 16, so that splits
// and reshapes into equal parts still infer, and far from any real size. Where they would make
// a shape the operator reads or makes reach the element limit (several dynamic dimensions, or
// large static ones beside them; infer_static refuses it), the second pair stands in: divisible
// by every number up to 10.
constexpr std::array<std::array<int64_t, 2>, 2> kProbeSets = {{{720720, 1441440}, {2520, 5040}}};

// Every shape an operator's inference reads or makes has fewer than 2^62 elements counting only
// its nonzero known dimensions, so that element counts, byte sizes and the strides of every axis
// fit in 64 bits (a fuzzed model's input of f32[12 x (2^63 - 1)] overflowed Flatten's products,
// one of f32[0 x 2 x (2^63 - 1)] Slice's strides). An error naming the node and the port if not.
absl::Status check_shape_size(const OpDef& op, std::string_view node, const char* port, size_t i,
                              const TensorType& t) {
  if (!shape_within_element_limit(t.shape))
    return absl::InvalidArgumentError(
        str_cat(op.name, " '", node, "': ", port, " ", i, " (", type_to_string(t), ") ",
                kBeyondElementLimit));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorType>> infer_static(const OpDef& op, std::string_view node,
                                                     const OpAttrs& attrs,
                                                     std::vector<const TensorType*> inputs,
                                                     std::vector<const Tensor*> constants,
                                                     int num_outputs) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i])
      if (absl::Status s = check_shape_size(op, node, "input", i, *inputs[i]); !s.ok()) return s;
  InferContext ictx(op.name, node, attrs, std::move(inputs), std::move(constants), num_outputs);
  if (absl::Status s = op.infer(ictx); !s.ok()) return s;
  if (ictx.outputs().empty())
    return absl::InternalError(str_cat(op.name, " '", node, "': inference set no output"));
  for (size_t o = 0; o < ictx.outputs().size(); ++o)
    if (absl::Status s = check_shape_size(op, node, "output", o, ictx.outputs()[o]); !s.ok())
      return s;
  if (!op.strings)
    for (size_t o = 0; o < ictx.outputs().size(); ++o)
      if (ictx.outputs()[o].dtype == DType::str)
        return absl::UnimplementedError(
            str_cat(op.name, " '", node, "': output ", o, " would be a string tensor, which ",
                    op.name, " does not make (see docs/onnx.md for the operators that do)"));
  return std::move(ictx.outputs());
}

// Inference with every dynamic dimension of `inputs` replaced by `size`.
absl::StatusOr<std::vector<TensorType>> probe(const OpDef& op, std::string_view node,
                                              const OpAttrs& attrs,
                                              const std::vector<const TensorType*>& inputs,
                                              const std::vector<const Tensor*>& constants,
                                              int num_outputs, int64_t size) {
  std::vector<TensorType> probed;
  probed.reserve(inputs.size());
  std::vector<const TensorType*> types;
  for (const TensorType* t : inputs) {
    if (!t) {
      types.push_back(nullptr);
      continue;
    }
    TensorType& p = probed.emplace_back(*t);
    for (int64_t& d : p.shape)
      if (d == kDynamicDim) d = size;
    types.push_back(&p);
  }
  return infer_static(op, node, attrs, std::move(types), constants, num_outputs);
}

// Inference with the dynamic dimensions taken as each size of `probes` in turn.
absl::StatusOr<std::array<std::vector<TensorType>, 2>> probe_pair(
    const OpDef& op, std::string_view node, const OpAttrs& attrs,
    const std::vector<const TensorType*>& inputs, const std::vector<const Tensor*>& constants,
    int num_outputs, const std::array<int64_t, 2>& probes) {
  std::array<std::vector<TensorType>, 2> runs;
  for (size_t i = 0; i < probes.size(); ++i) {
    auto r = probe(op, node, attrs, inputs, constants, num_outputs, probes[i]);
    if (!r.ok())
      return absl::Status(r.status().code(),
                          str_cat(r.status().message(), " (an input has a data-dependent shape; ",
                                  "its unknown dimensions were taken as ", probes[i], ")"));
    runs[i] = std::move(*r);
  }
  return runs;
}

}  // namespace

absl::StatusOr<std::vector<TensorType>> infer_output_types(const OpDef& op, std::string_view node,
                                                           const OpAttrs& attrs,
                                                           std::vector<const TensorType*> inputs,
                                                           std::vector<const Tensor*> constants,
                                                           int num_outputs) {
  if (!op.strings)
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i] && inputs[i]->dtype == DType::str)
        return absl::UnimplementedError(
            str_cat(op.name, " '", node, "': input ", i, " is a string tensor (",
                    type_to_string(*inputs[i]), "), which ", op.name,
                    " does not take (see docs/onnx.md for the operators that do)"));
  bool dynamic = false;
  for (const TensorType* t : inputs) dynamic = dynamic || (t && t->is_dynamic());
  if (!dynamic || op.dynamic_shapes)
    return infer_static(op, node, attrs, std::move(inputs), std::move(constants), num_outputs);
  // The first probe set whose inferences both succeed; the error reported is that of the last
  // set tried.
  std::optional<std::array<std::vector<TensorType>, 2>> runs;
  absl::Status failure;
  for (const auto& probes : kProbeSets) {
    auto r = probe_pair(op, node, attrs, inputs, constants, num_outputs, probes);
    if (r.ok()) {
      runs = std::move(*r);
      break;
    }
    failure = r.status();
  }
  if (!runs) return failure;
  auto ones = probe(op, node, attrs, inputs, constants, num_outputs, 1);
  std::vector<TensorType> out = (*runs)[0];
  for (size_t o = 0; o < out.size(); ++o) {
    const TensorType& other = (*runs)[1][o];
    if ((*runs)[1].size() != out.size() || other.dtype != out[o].dtype ||
        other.shape.size() != out[o].shape.size())
      return absl::InvalidArgumentError(
          str_cat(op.name, " '", node, "': the rank or element type of output ", o,
                  " depends on the data-dependent size of an input"));
    const TensorType* one = ones.ok() && ones->size() == out.size() &&
                                    (*ones)[o].shape.size() == out[o].shape.size()
                                ? &(*ones)[o]
                                : nullptr;
    for (size_t d = 0; d < out[o].shape.size(); ++d) {
      const int64_t v = out[o].shape[d];
      if (other.shape[d] != v || (one && one->shape[d] != v)) out[o].shape[d] = kDynamicDim;
    }
  }
  return out;
}

}  // namespace collage
