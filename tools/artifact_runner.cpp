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

DLTensor view(const Tensor& t) {
  DLTensor d{};
  d.data = const_cast<void*>(t.raw());
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
      (input ? r.input_types_ : r.output_types_).push_back(std::move(type));
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

absl::StatusOr<std::vector<Tensor>> ArtifactRunner::run(const std::vector<Tensor>& inputs) const {
  std::vector<Tensor> outputs;
  std::vector<DLTensor> in, out;
  for (const Tensor& t : inputs) in.push_back(view(t));
  outputs.reserve(output_types_.size());
  for (const TensorType& t : output_types_)
    out.push_back(view(outputs.emplace_back(t.dtype, t.shape)));
  absl::Status s =
      take(collage_module_run(module_.get(), in.data(), static_cast<int32_t>(in.size()), out.data(),
                              static_cast<int32_t>(out.size())));
  if (!s.ok()) return s;
  return outputs;
}

absl::Status ArtifactRunner::set_profiling(bool on) const {
  return take(collage_module_set_profiling(module_.get(), on ? 1 : 0));
}

absl::Status ArtifactRunner::write_profile(const std::string& path) const {
  return take(collage_module_write_profile(module_.get(), path.c_str()));
}

}  // namespace collage::cli
