// Helpers of the whole-model benchmarks (model_bench, artifact_bench): ONNX Runtime timed in a
// child process, the cached models' input and reference arrays, medians and the error measure.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/context.h"
#include "collage/graph.h"
#include "collage/tensor.h"

namespace collage::bench {

double median(std::vector<double> v);  // NaN for no values
// The non-empty items of a comma-separated list.
std::vector<std::string> split_list(const std::string& list);
// `text` as a number of seconds >= 0; nullopt when it is not one.
std::optional<double> parse_seconds(const std::string& text);
double now_ms();                       // steady clock
// CPU time of every thread of this process so far (workers spinning or running tasks included).
double process_cpu_ms();

// max|a - b| / max|b|, the measure of tests/models (element-wise relative error means nothing
// for values near zero); infinity when the types differ or only one of a pair is NaN.
double scaled_error(const Tensor& a, const Tensor& b);

// The cache of test models: $COLLAGE_MODEL_CACHE, else ~/.cache/collage/models.
std::filesystem::path model_cache();

// The arrays of `npz` in the order of `names`; NotFound names the missing array.
absl::StatusOr<std::vector<Tensor>> arrays_by_name(const std::filesystem::path& npz,
                                                   const std::vector<std::string>& names);

// A model of the cache (`name`.onnx) after run_passes, its inputs and ONNX Runtime's outputs.
struct CachedModel {
  Graph graph;
  std::vector<Tensor> inputs, expected;
};
// nullopt, once it has printed why (naming the script that makes a missing model), when the
// model or its arrays cannot be loaded.
std::optional<CachedModel> load_cached_model(const Context& ctx, const std::string& name);

// A peer runtime, "onnxruntime" or "openvino", in a child process (bench/models/peer_server.py
// run by `python`): asked for N runs, answers their times. Ends the child when destroyed.
class PeerProcess {
 public:
  // nullopt with `error` set when the child does not start or does not answer "ready". With
  // `outputs` not empty, the peer writes its outputs there (npz, by output name) before "ready".
  static std::optional<PeerProcess> start(const std::string& python, const std::string& runtime,
                                          const std::filesystem::path& model,
                                          const std::filesystem::path& inputs, int threads,
                                          const std::filesystem::path& outputs,
                                          std::string* error);
  PeerProcess() = default;
  PeerProcess(PeerProcess&& o) noexcept { *this = std::move(o); }
  PeerProcess& operator=(PeerProcess&& o) noexcept;
  ~PeerProcess();

  // `n` runs: their wall times and the CPU times of the peer's whole process, in ms (empty when
  // the server failed).
  struct Times {
    std::vector<double> wall, cpu;
  };
  Times time(int64_t n);

 private:
  std::string read_line();
  pid_t pid_ = -1;
  FILE* in_ = nullptr;
  FILE* out_ = nullptr;
};

}  // namespace collage::bench
