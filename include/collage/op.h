// Operator definitions and the operator registry: attributes, shape inference, fusion kind and the
// reference kernel that defines each operator's meaning.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collage/attrs.h"
#include "collage/tensor.h"

namespace collage {

// How an operator combines with its neighbours in fusion (TVM's OpPatternKind).
enum class FusionKind : uint8_t {
  elementwise,             // out[i] = f(in[i]) on identical shapes
  broadcast,               // elementwise with numpy broadcasting
  injective,               // each output element reads a computed set of input elements
  reduction,               // reduces one or more axes
  out_elementwise_fusable, // conv, matmul: an elementwise chain can be fused after it
  opaque,                  // no fusion
};
std::string_view fusion_kind_name(FusionKind k);

// What shape inference sees of one node.
class InferContext {
 public:
  InferContext(std::string_view op, std::string_view node, const OpAttrs& attrs,
               std::vector<const TensorType*> inputs, std::vector<const Tensor*> constants,
               int num_outputs)
      : op_(op), node_(node), attrs_(attrs), inputs_(std::move(inputs)),
        constants_(std::move(constants)), num_outputs_(num_outputs) {}

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // True when optional input i was given.
  bool has_input(int i) const { return i < num_inputs() && inputs_[i] != nullptr; }
  const TensorType& input(int i) const { return *inputs_[i]; }
  // The value of input i when it is a constant known at compile time, else null.
  const Tensor* constant(int i) const { return has_input(i) ? constants_[i] : nullptr; }
  // The number of outputs the caller asked for (e.g. from the ONNX node), or -1 if unspecified.
  int requested_outputs() const { return num_outputs_; }
  template <typename A>
  const A& attrs() const { return static_cast<const A&>(attrs_); }
  const OpAttrs& all_attrs() const { return attrs_; }
  std::string_view op_name() const { return op_; }
  std::string_view node_name() const { return node_; }

  std::vector<TensorType>& outputs() { return outputs_; }
  void set_output(int i, TensorType t);

  // An InvalidArgument error prefixed with "<Op> '<node>': ".
  absl::Status error(std::string_view message) const;

 private:
  std::string_view op_, node_;
  const OpAttrs& attrs_;
  std::vector<const TensorType*> inputs_;
  std::vector<const Tensor*> constants_;
  int num_outputs_;
  std::vector<TensorType> outputs_;
};

// What a reference kernel sees: inputs (an absent optional input is an empty Tensor) and
// pre-allocated outputs of the inferred types.
struct KernelArgs {
  std::span<const Tensor> inputs;
  std::span<Tensor> outputs;
  const OpAttrs& attrs;
  template <typename A>
  const A& get() const { return static_cast<const A&>(attrs); }
};

using InferFn = std::function<absl::Status(InferContext&)>;
using KernelFn = std::function<absl::Status(const KernelArgs&)>;

// An attribute whose value may instead come from an input computed at run time (ONNX's
// shape-like inputs: a Reduce's axes, Reshape's shape, Resize's scales).
struct AttrInput {
  enum class Kind : uint8_t {
    ints,    // std::vector<int64_t> field, from an integer tensor of rank 0 or 1
    floats,  // std::vector<float> field, from a floating-point tensor of rank 0 or 1
    scalar,  // float field, from a one-element tensor
  };
  std::string attr;
  Kind kind = Kind::ints;
};

// One operator. Names follow ONNX ("Conv", "MatMul"); collage-only operators use the same style.
struct OpDef {
  std::string name;
  FusionKind fusion = FusionKind::opaque;
  int min_inputs = 1;
  int max_inputs = 1;  // -1: variadic
  // Creates the attribute struct with its defaults.
  std::function<std::unique_ptr<OpAttrs>()> make_attrs;
  InferFn infer;
  KernelFn reference;
  // Inputs whose values must be compile-time constants (shape-like inputs such as Reshape's).
  std::vector<int> constant_inputs;
  // Commutative binary operators (Add, Mul) may have their first two inputs swapped.
  bool commutative = false;
  // An operator whose output depends on its input values only through shapes (Shape).
  bool shape_only = false;
  // Shape inference handles inputs with dynamic dimensions (kDynamicDim) itself. Otherwise
  // infer_output_types probes the operator's inference with sizes standing in for them.
  bool dynamic_shapes = false;
  // The operator takes and makes `str` tensors (its inference checks which inputs may be
  // strings). infer_output_types refuses a string input of any other operator, naming it, so
  // kernels that move bytes never see std::string elements.
  bool strings = false;
  // Attributes that a node may take from trailing inputs instead: attr_inputs[j] is input
  // first_attr_input + j, absent (the attribute holds the value) unless its value is computed at
  // run time. OpRegistry::add wraps `infer` and `reference` (lib/ir/attr_inputs.h): with every
  // present one's value known (a constant, or the actual tensor at run time) they see the
  // attribute set to it, with the same validation; with one unknown, `infer_unknown` gives the
  // outputs (dimensions kDynamicDim; null: input 0's dtype and rank, every dimension unknown).
  std::vector<AttrInput> attr_inputs;
  InferFn infer_unknown;
  int first_attr_input = -1;  // set by OpRegistry::add: max_inputs before the attribute inputs
};

// The output types of a node of operator `op` (named `node` in errors) on inputs of types
// `inputs` (null: an absent optional input) whose compile-time values are `constants` (null when
// unknown), as GraphBuilder and the verifier infer them. When an input has a dynamic dimension
// and the operator does not handle those itself, its inference runs with each dynamic dimension
// replaced by a large size, by twice that size and by 1: an output dimension that comes out the
// same every time is static, any other is dynamic (a 1 that fails is ignored: it only reveals
// clamped sizes, as Slice's). Errors are the operator's, saying which sizes stood in.
absl::StatusOr<std::vector<TensorType>> infer_output_types(const OpDef& op, std::string_view node,
                                                           const OpAttrs& attrs,
                                                           std::vector<const TensorType*> inputs,
                                                           std::vector<const Tensor*> constants,
                                                           int num_outputs);

// Operator set; lives on a Context. Lookup is by name.
class OpRegistry {
 public:
  // Adds an operator; AlreadyExists if the name is taken.
  absl::Status add(OpDef def);
  // Null when unknown.
  const OpDef* find(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, std::unique_ptr<OpDef>, std::less<>> ops_;
};

// Registers every built-in operator (defined under lib/ops/).
void register_builtin_ops(OpRegistry& registry);

// Helper used by operator definitions: a def with attribute struct A.
template <typename A>
OpDef make_op(std::string name, FusionKind fusion, int min_inputs, int max_inputs, InferFn infer,
              KernelFn reference) {
  OpDef d;
  d.name = std::move(name);
  d.fusion = fusion;
  d.min_inputs = min_inputs;
  d.max_inputs = max_inputs;
  d.make_attrs = [] { return std::make_unique<A>(); };
  d.infer = std::move(infer);
  d.reference = std::move(reference);
  return d;
}

}  // namespace collage
