// A scheduled anchor group compiled into a runnable kernel: parameter order, pre-packing, runs.
#include "tune/group_kernel.h"

#include <algorithm>

#include "core/str_cat.h"

namespace collage::tune {
namespace {

bool contains(const std::vector<te::Tensor>& v, const te::Tensor& t) {
  return std::any_of(v.begin(), v.end(), [&](const te::Tensor& x) { return x.same_as(t); });
}

}  // namespace

absl::StatusOr<GroupKernel> GroupKernel::compile(const te_ops::AnchorGroup& group,
                                                 const te_ops::ScheduledGroup& scheduled,
                                                 const std::string& name) {
  GroupKernel k;
  k.inputs_ = group.inputs;
  k.prepacked_ = scheduled.prepacked;
  k.outputs_te_ = group.outputs;
  // Inputs read by a stage that is not pre-packed.
  std::vector<te::Tensor> read;
  for (const te::Tensor& t : scheduled.schedule.stage_tensors()) {
    if (t.op_kind() != te::OpKind::compute || contains(k.prepacked_, t)) continue;
    for (const te::Tensor& in : te::input_tensors(t))
      if (!contains(read, in)) read.push_back(in);
  }
  for (const te::Tensor& in : group.inputs)
    if (contains(read, in)) k.params_.push_back(in);
  for (const te::Tensor& p : k.prepacked_) k.params_.push_back(p);
  for (const te::Tensor& o : group.outputs) k.params_.push_back(o);

  std::vector<te::PrimFunc> funcs;
  absl::StatusOr<te::PrimFunc> main = te::lower(scheduled.schedule, k.params_, name);
  if (!main.ok()) return main.status();
  funcs.push_back(*main);
  for (size_t i = 0; i < k.prepacked_.size(); ++i) {
    std::vector<te::Tensor> params = te::input_tensors(k.prepacked_[i]);
    params.push_back(k.prepacked_[i]);
    absl::StatusOr<te::PrimFunc> pack =
        te::lower_pack(scheduled.schedule, k.prepacked_[i], params, str_cat(name, "_pack", i));
    if (!pack.ok()) return pack.status();
    funcs.push_back(*pack);
    k.pack_params_.push_back(std::move(params));
  }
  codegen::JitOptions options;
  options.target = group.target;
  absl::StatusOr<std::unique_ptr<codegen::JitModule>> module =
      codegen::JitModule::compile(funcs, options);
  if (!module.ok()) return module.status();
  k.module_ = std::move(*module);
  absl::StatusOr<codegen::KernelFn> fn = k.module_->lookup(name);
  if (!fn.ok()) return fn.status();
  k.main_ = *fn;
  for (size_t i = 0; i < k.prepacked_.size(); ++i) {
    absl::StatusOr<codegen::KernelFn> p = k.module_->lookup(str_cat(name, "_pack", i));
    if (!p.ok()) return p.status();
    k.packs_.push_back(*p);
  }
  return k;
}

absl::Status GroupKernel::bind(const std::vector<Tensor>& inputs) {
  if (inputs.size() != inputs_.size())
    return absl::InvalidArgumentError(
        str_cat("group kernel: ", inputs.size(), " inputs given, expected ", inputs_.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].shape() != inputs_[i].shape() || inputs[i].dtype() != inputs_[i].dtype())
      return absl::InvalidArgumentError(
          str_cat("group kernel: input ", i, " ('", inputs_[i].name(), "') has shape ",
                  shape_to_string(inputs[i].shape()), ", expected ",
                  shape_to_string(inputs_[i].shape())));
  input_values_ = inputs;
  auto value_of = [&](const te::Tensor& t) -> void* {
    for (size_t i = 0; i < inputs_.size(); ++i)
      if (inputs_[i].same_as(t)) return input_values_[i].raw();
    for (size_t i = 0; i < prepacked_.size(); ++i)
      if (prepacked_[i].same_as(t)) return packed_values_[i].raw();
    for (size_t i = 0; i < outputs_te_.size(); ++i)
      if (outputs_te_[i].same_as(t)) return outputs_[i].raw();
    return nullptr;
  };
  packed_values_.clear();
  for (const te::Tensor& p : prepacked_) packed_values_.emplace_back(p.dtype(), p.shape());
  outputs_.clear();
  for (const te::Tensor& o : outputs_te_) outputs_.emplace_back(o.dtype(), o.shape());
  for (size_t i = 0; i < prepacked_.size(); ++i) {
    std::vector<void*> args;
    for (const te::Tensor& t : pack_params_[i]) args.push_back(value_of(t));
    if (std::find(args.begin(), args.end(), nullptr) != args.end())
      return absl::InvalidArgumentError(
          str_cat("group kernel: pre-packed '", prepacked_[i].name(),
                  "' reads a tensor that is not a group input"));
    codegen::run_kernel(packs_[i], args.data(), 1, nullptr);
  }
  args_.clear();
  for (const te::Tensor& t : params_) args_.push_back(value_of(t));
  return absl::OkStatus();
}

void GroupKernel::run(int tasks, ThreadPool* pool) {
  codegen::run_kernel(main_, args_.data(), std::max(tasks, 1), pool);
}

}  // namespace collage::tune
