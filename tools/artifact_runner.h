// `collage run` on an artifact: the file told apart by its magic, loaded and run through the
// runtime's C API (libcollage_runtime), exactly as an application would.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/runtime.h"
#include "collage/tensor.h"

namespace collage::cli {

// True when `path` is a readable file that starts with the artifact magic "COLLAGE\0".
bool is_artifact_file(const std::string& path);

class ArtifactRunner {
 public:
  // Errors carry the runtime's message (corrupt file, missing runtime module, ...). `executor`:
  // "waves", "sequential" or empty (the artifact's default); `num_threads`: threads a kernel's
  // tasks spread over (0: every core); `no_recompile`: COLLAGE_LOAD_NO_RECOMPILE.
  static absl::StatusOr<ArtifactRunner> load(const std::string& path,
                                             const std::string& executor = "", int num_threads = 0,
                                             bool no_recompile = false);
  // What the runtime modules noted while loading (collage_module_load_notes), "" for nothing.
  std::string load_notes() const { return collage_module_load_notes(module_.get()); }

  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<TensorType>& input_types() const { return input_types_; }
  const std::vector<std::string>& output_names() const { return output_names_; }
  // Per input: its batch axis in an artifact compiled for a batch range (input_types() holds
  // the largest batch), else -1.
  const std::vector<int>& input_batch_axes() const { return input_batch_axes_; }
  uint64_t arena_bytes() const;
  // The executor's name and its costs over the runs so far.
  collage_executor_stats_t executor_stats() const;
  // Runs once on `inputs` (one per graph input, of the input types but for the batch of a
  // dynamic-batch artifact); the output tensors, of the inputs' batch, or of the size the run
  // gives an output whose shape depends on data. An output of `reuse` (an earlier run's) of the
  // type and shape wanted is moved out of it and written again, as an application that keeps
  // its output buffers does; the others are new, and what `reuse` keeps is the caller's to free.
  absl::StatusOr<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                          std::vector<Tensor>& reuse) const;
  absl::StatusOr<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const {
    std::vector<Tensor> none;
    return run(inputs, none);
  }
  // Per-kernel timing of the runs from now on (on: a new trace), written as a Chrome trace.
  absl::Status set_profiling(bool on) const;
  absl::Status write_profile(const std::string& path) const;

 private:
  struct Release {
    void operator()(collage_module_t* m) const { collage_module_release(m); }
  };
  std::unique_ptr<collage_module_t, Release> module_;
  std::vector<std::string> input_names_, output_names_;
  std::vector<TensorType> input_types_, output_types_;
  std::vector<int> input_batch_axes_, output_batch_axes_;
  bool dynamic_outputs_ = false;  // some output depends on data or is a string: run_outputs
  // The run when the runtime allocates the outputs (collage_module_run_outputs).
  absl::StatusOr<std::vector<Tensor>> run_outputs(const std::vector<DLTensor>& in) const;
};

}  // namespace collage::cli
