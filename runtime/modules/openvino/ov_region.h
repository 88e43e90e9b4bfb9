// Region: one compiled OpenVINO model (a region of a placed graph) run on the caller's dense
// buffers, with variants compiled for fewer threads so that the wave executor can run it beside
// other kernels (its TBB team is limited the way a oneDNN kernel's OpenMP team is).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "openvino/runtime/compiled_model.hpp"
#include "openvino/runtime/core.hpp"
#include "openvino/runtime/infer_request.hpp"

namespace collage::rt_openvino {

// The Core every region of the process is compiled and imported with (it holds the loaded
// plugins; OpenVINO's Core is thread-safe).
ov::Core& core();

// The build number of the OpenVINO library in this process (ov::get_openvino_version()).
std::string library_build();

// The properties every region is compiled with: the CPU plugin, `threads` inference threads, one
// stream, the latency hint, f32 inference precision, and no pinning of its threads to cores (they
// share the cores with the runtime's own pool and with other regions' teams).
ov::AnyMap compile_properties(int32_t threads);

// The text of an OpenVINO exception without its source-location lines.
std::string exception_text(const std::exception& e);

// The OpenVINO element type of a collage_dtype_t; throws RecordError for one it has no match for.
ov::element::Type element_type(int32_t dtype);

struct ArgType {
  ov::element::Type type;
  ov::Shape shape;
};

class Region {
 public:
  // The model variants for fewer threads are compiled from (called at most once per variant).
  using ModelSource = std::function<std::shared_ptr<const ov::Model>()>;

  // `compiled` runs with `threads` threads. `args` are the kernel's arguments, inputs first
  // (`num_inputs` of them), then outputs, matched with the compiled model's ports in order.
  // Throws RecordError naming a port whose count, element type or shape differs.
  Region(ov::CompiledModel compiled, int32_t threads, ModelSource source, std::vector<ArgType> args,
         size_t num_inputs);

  int32_t threads() const { return full_.threads; }
  // The compiled model for the region's own thread count (a handle: copies share it).
  ov::CompiledModel compiled() const { return full_.compiled; }

  // Runs on the region's own thread count. Thread-safe: each concurrent run takes an infer
  // request of its own. Throws ov::Exception.
  void run(void* const* args) { run_on(full_, args); }
  // Runs with at most `max_threads` OpenVINO threads (>= 1): the region itself when it was
  // compiled for no more, else a variant compiled for `max_threads` (now, unless prepared).
  void run_threads(void* const* args, int32_t max_threads) {
    run_on(variant(max_threads), args);
  }
  // Compiles the variant run_threads(…, max_threads) uses, if it needs one.
  void prepare_threads(int32_t max_threads) { (void)variant(max_threads); }

 private:
  // An infer request and the argument buffers its tensors are bound to (a run binds only those
  // that differ from the last run's: setting a tensor costs the plugin a check of its memory).
  struct Bound {
    ov::InferRequest request;
    std::vector<void*> args;
  };
  struct Variant {
    ov::CompiledModel compiled;
    int32_t threads = 1;
    std::mutex mu;
    std::vector<Bound> idle;  // infer requests no run holds
  };
  void run_on(Variant& v, void* const* args);
  Variant& variant(int32_t max_threads);

  ModelSource source_;
  std::vector<ArgType> args_;
  size_t num_inputs_;
  Variant full_;
  std::mutex variants_mu_;
  std::map<int32_t, std::unique_ptr<Variant>> variants_;  // by thread count
};

}  // namespace collage::rt_openvino
