// ArtifactRunner: collage Tensors in and out of the runtime C API.
#include "artifact_runner.h"

#include <cstring>
#include <fstream>

namespace collage::cli {
namespace {

// The runtime's status as an absl::Status (freed here).
absl::Status take(collage_status_t* s) {
  if (!s) return absl::OkStatus();
  const int32_t code = collage_status_code(s);
  std::string message = collage_status_message(s);
  collage_status_free(s);
  return code == COLLAGE_STATUS_INVALID_ARGUMENT ? absl::InvalidArgumentError(message)
         : code == COLLAGE_STATUS_NOT_FOUND      ? absl::NotFoundError(message)
         : code == COLLAGE_STATUS_CORRUPT        ? absl::DataLossError(message)
         : code == COLLAGE_STATUS_UNSUPPORTED    ? absl::UnimplementedError(message)
                                                 : absl::InternalError(message);
}

// A view of `t` for the runtime; a str tensor's elements as collage_string_t in `strings`, which
// must outlive the view.
DLTensor view(const Tensor& t, std::vector<collage_string_t>& strings) {
  DLTensor d{};
  d.data = const_cast<void*>(t.raw());
  if (t.dtype() == DType::str) {
    for (int64_t i = 0; i < t.numel(); ++i)
      strings.push_back({t.data<std::string>()[i].data(), t.data<std::string>()[i].size()});
    d.data = strings.data();
  }
  d.device = {kDLCPU, 0};
  d.ndim = static_cast<int32_t>(t.rank());
  d.dtype = collage_dtype_to_dlpack(static_cast<int32_t>(t.dtype()));
  d.shape = const_cast<int64_t*>(t.shape().data());
  return d;
}

}  // namespace

bool is_artifact_file(const std::string& path) {
  char magic[8] = {};
  std::ifstream f(path, std::ios::binary);
  return f.read(magic, sizeof magic) && std::memcmp(magic, "COLLAGE\0", 8) == 0;
}

absl::StatusOr<ArtifactRunner> ArtifactRunner::load(const std::string& path,
                                                    const std::string& executor, int num_threads,
                                                    bool no_recompile) {
  ArtifactRunner r;
  collage_load_options_t options;
  collage_load_options_init(&options);
  options.num_threads = num_threads;
  if (no_recompile) options.flags |= COLLAGE_LOAD_NO_RECOMPILE;
  if (executor == "waves")
    options.flags |= COLLAGE_LOAD_EXECUTOR_WAVES;
  else if (executor == "sequential")
    options.flags |= COLLAGE_LOAD_EXECUTOR_SEQUENTIAL;
  else if (!executor.empty())
    return absl::InvalidArgumentError(
        "--executor '" + executor + "': expected waves or sequential");
  collage_module_t* m = nullptr;
  if (absl::Status s = take(collage_module_load_file(path.c_str(), &options, &m)); !s.ok())
    return s;
  r.module_.reset(m);
  for (int io = 0; io < 2; ++io) {
    const bool input = io == 0;
    const int32_t n = input ? collage_module_num_inputs(m) : collage_module_num_outputs(m);
    for (int32_t i = 0; i < n; ++i) {
      collage_tensor_info_t info{};
      info.struct_size = sizeof info;
      absl::Status s = take(input ? collage_module_input_info(m, i, &info)
                                  : collage_module_output_info(m, i, &info));
      if (!s.ok()) return s;
      TensorType type{static_cast<DType>(info.dtype), Shape(info.shape, info.shape + info.ndim)};
      (input ? r.input_names_ : r.output_names_).push_back(info.name);
      (input ? r.input_types_ : r.output_types_).push_back(type);
      (input ? r.input_batch_axes_ : r.output_batch_axes_).push_back(info.batch_axis);
      // Data-dependent shapes and strings (whose bytes the library owns) come out through
      // collage_module_run_outputs.
      if (!input && (type.is_dynamic() || type.dtype == DType::str)) r.dynamic_outputs_ = true;
    }
  }
  return r;
}

uint64_t ArtifactRunner::arena_bytes() const {
  return collage_module_arena_bytes(module_.get());
}

collage_executor_stats_t ArtifactRunner::executor_stats() const {
  collage_executor_stats_t stats{};
  stats.struct_size = sizeof stats;
  // Fails only for null arguments, which these are not.
  (void)take(collage_module_executor_stats(module_.get(), &stats));
  return stats;
}

absl::StatusOr<std::vector<Tensor>> ArtifactRunner::run(const std::vector<Tensor>& inputs,
                                                        std::vector<Tensor>& reuse) const {
  std::vector<Tensor> outputs;
  std::vector<DLTensor> in, out;
  std::vector<std::vector<collage_string_t>> strings(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) in.push_back(view(inputs[i], strings[i]));
  if (dynamic_outputs_) return run_outputs(in);
  // A dynamic-batch artifact's outputs have the inputs' batch (the runtime checks its range).
  int64_t batch = -1;
  for (size_t i = 0; i < inputs.size() && i < input_batch_axes_.size(); ++i) {
    const int axis = input_batch_axes_[i];
    if (axis >= 0 && axis < inputs[i].rank()) batch = inputs[i].shape()[axis];
  }
  outputs.reserve(output_types_.size());
  for (size_t i = 0; i < output_types_.size(); ++i) {
    Shape shape = output_types_[i].shape;
    if (batch >= 0 && output_batch_axes_[i] >= 0) shape[output_batch_axes_[i]] = batch;
    std::vector<collage_string_t> none;  // outputs are never strings here
    const bool same = i < reuse.size() && reuse[i].dtype() == output_types_[i].dtype &&
                      reuse[i].shape() == shape;
    out.push_back(view(same ? outputs.emplace_back(std::move(reuse[i]))
                            : outputs.emplace_back(output_types_[i].dtype, shape),
                       none));
  }
  absl::Status s =
      take(collage_module_run(module_.get(), in.data(), static_cast<int32_t>(in.size()), out.data(),
                              static_cast<int32_t>(out.size())));
  if (!s.ok()) return s;
  return outputs;
}

absl::StatusOr<std::vector<Tensor>> ArtifactRunner::run_outputs(
    const std::vector<DLTensor>& in) const {
  collage_outputs_t* raw = nullptr;
  absl::Status s = take(collage_module_run_outputs(module_.get(), in.data(),
                                                   static_cast<int32_t>(in.size()), &raw));
  std::unique_ptr<collage_outputs_t, void (*)(collage_outputs_t*)> outs(raw,
                                                                        collage_outputs_release);
  if (!s.ok()) return s;
  std::vector<Tensor> outputs;
  for (int32_t i = 0; i < collage_outputs_count(outs.get()); ++i) {
    DLTensor t{};
    if (absl::Status g = take(collage_outputs_get(outs.get(), i, &t)); !g.ok()) return g;
    Tensor copy(output_types_[i].dtype, Shape(t.shape, t.shape + t.ndim));
    if (copy.dtype() == DType::str) {
      const auto* s = static_cast<const collage_string_t*>(t.data);
      for (int64_t e = 0; e < copy.numel(); ++e)
        if (s[e].size) copy.data<std::string>()[e].assign(s[e].data, s[e].size);
    } else if (copy.bytes()) {
      std::memcpy(copy.raw(), t.data, copy.bytes());
    }
    outputs.push_back(std::move(copy));
  }
  return outputs;
}

absl::Status ArtifactRunner::set_profiling(bool on) const {
  return take(collage_module_set_profiling(module_.get(), on ? 1 : 0));
}

absl::Status ArtifactRunner::write_profile(const std::string& path) const {
  return take(collage_module_write_profile(module_.get(), path.c_str()));
}

}  // namespace collage::cli
