// Registration of the nn operator family and the checks its files share.
#include "ops/nn_ops.h"

#include <cassert>
#include <cstring>
#include <optional>

#include "core/str_cat.h"
#include "ops/op_sets.h"

namespace collage::ops {

namespace {

bool widened(DType t, bool with_16_bit) {
  return t == DType::f64 || (with_16_bit && (t == DType::f16 || t == DType::bf16));
}

// The dtype an operator's float inputs share when it is widened, else nullopt.
std::optional<DType> wide_type(const std::vector<const TensorType*>& types, bool with_16_bit) {
  for (const TensorType* t : types)
    if (t && widened(t->dtype, with_16_bit)) return t->dtype;
  return std::nullopt;
}

// The nn reference kernels compute in f32. For f64 (and f16, bf16) inputs the operator is inferred
// and run on f32 copies of its float inputs, and its f32 outputs are converted back: the meaning
// is the f32 one, rounded to the type (f64 keeps f32 precision).
OpDef widen_to_f32(OpDef def, bool with_16_bit) {
  InferFn infer = def.infer;
  KernelFn reference = def.reference;
  std::string name = def.name;
  def.infer = [infer, name, with_16_bit](InferContext& ctx) -> absl::Status {
    std::vector<const TensorType*> types;
    std::vector<const Tensor*> consts;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      types.push_back(ctx.has_input(i) ? &ctx.input(i) : nullptr);
      consts.push_back(ctx.constant(i));
    }
    const std::optional<DType> wide = wide_type(types, with_16_bit);
    if (!wide) return infer(ctx);
    std::vector<TensorType> f32(types.size());
    std::vector<Tensor> f32_consts(types.size());
    for (size_t i = 0; i < types.size(); ++i) {
      if (!types[i]) continue;
      f32[i] = *types[i];
      if (f32[i].dtype != *wide) continue;
      f32[i].dtype = DType::f32;
      types[i] = &f32[i];
      if (consts[i]) {
        f32_consts[i] = consts[i]->cast(DType::f32);
        consts[i] = &f32_consts[i];
      }
    }
    InferContext inner(name, "", ctx.attrs<OpAttrs>(), types, consts, ctx.requested_outputs());
    if (absl::Status s = infer(inner); !s.ok()) {
      // The inner error reads "<Op> '': message"; the node is named by the outer context.
      std::string m(s.message());
      const std::string prefix = str_cat(name, " '': ");
      if (m.rfind(prefix, 0) == 0) m.erase(0, prefix.size());
      return ctx.error(m);
    }
    for (size_t i = 0; i < inner.outputs().size(); ++i) {
      TensorType t = inner.outputs()[i];
      if (t.dtype == DType::f32) t.dtype = *wide;
      ctx.set_output(static_cast<int>(i), std::move(t));
    }
    return absl::OkStatus();
  };
  def.reference = [reference, with_16_bit](const KernelArgs& args) -> absl::Status {
    std::optional<DType> wide;
    for (const Tensor& t : args.inputs)
      if (!t.empty() && widened(t.dtype(), with_16_bit)) wide = t.dtype();
    if (!wide) return reference(args);
    std::vector<Tensor> ins;
    for (const Tensor& t : args.inputs)
      ins.push_back(!t.empty() && t.dtype() == *wide ? t.cast(DType::f32) : t);
    std::vector<Tensor> outs;
    for (const Tensor& t : args.outputs)
      outs.emplace_back(t.dtype() == *wide ? DType::f32 : t.dtype(), t.shape());
    KernelArgs inner{ins, outs, args.attrs};
    if (absl::Status s = reference(inner); !s.ok()) return s;
    for (size_t i = 0; i < outs.size(); ++i) {
      Tensor back = outs[i].dtype() == args.outputs[i].dtype() ? outs[i] : outs[i].cast(*wide);
      if (back.bytes() > 0) std::memcpy(args.outputs[i].raw(), back.raw(), back.bytes());
    }
    return absl::OkStatus();
  };
  return def;
}

}  // namespace

void add_builtin(OpRegistry& r, OpDef def) {
  // Softmax and the normalisations widen f64 only: ONNX defines their 16-bit forms with every
  // step rounded to the type, which an f32 computation rounded once does not reproduce.
  const bool stepwise = def.name == "Softmax" || def.name == "LogSoftmax" ||
                        def.name.find("Normalization") != std::string::npos;
  [[maybe_unused]] absl::Status s = r.add(widen_to_f32(std::move(def), !stepwise));
  assert(s.ok());
}

absl::Status require_f32(const InferContext& ctx, std::initializer_list<const char*> names) {
  int i = 0;
  for (const char* name : names) {
    if (ctx.has_input(i) && ctx.input(i).dtype != DType::f32)
      return ctx.error(
          str_cat("input ", name, " must be f32, got ", dtype_name(ctx.input(i).dtype)));
    ++i;
  }
  return absl::OkStatus();
}

absl::Status node_error(const InferContext& ctx, const absl::Status& s) {
  return ctx.error(std::string(s.message()));
}

Shape spatial_dims(const Shape& s) {
  return Shape(s.begin() + 2, s.end());
}

double round16(DType t, double v) {
  if (t == DType::f16) return half_to_float(float_to_half(static_cast<float>(v)));
  if (t == DType::bf16) return bfloat16_to_float(float_to_bfloat16(static_cast<float>(v)));
  return v;
}

void register_nn_ops(OpRegistry& r) {
  register_conv_op(r);
  register_conv_transpose_op(r);
  register_pool_ops(r);
  register_norm_ops(r);
  register_batch_norm_training_op(r);
  register_deform_conv_op(r);
  register_max_unpool_op(r);
  register_softmax_ops(r);
  register_matmul_ops(r);
}

}  // namespace collage::ops
