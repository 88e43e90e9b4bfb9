// The openvino backend: a group is written as ONNX, read by OpenVINO's ONNX frontend and compiled
// for the CPU through the openvino runtime module's code (what an artifact runs).
#include "collage/backends/openvino.h"

#include <thread>

#include "backends/common/module_kernel.h"
#include "backends/openvino/openvino_kernel.h"
#include "backends/openvino/openvino_rules.h"
#include "backends/openvino/region_cache.h"
#include "backends/openvino/region_onnx.h"
#include "collage/kernel_shelf.h"
#include "core/str_cat.h"
#include "openvino/op/parameter.hpp"

namespace collage {
namespace {

using openvino_backend::CachedRegionKernel;
using openvino_backend::OpenvinoKernel;
using openvino_backend::read_cached_region;
using openvino_backend::RecordCacheEntry;
using openvino_backend::region_key;

// `group` compiled by OpenVINO for `threads` threads; its record, once made, goes to `cache`.
absl::StatusOr<std::unique_ptr<Kernel>> compile_group(const Graph& group, int32_t threads,
                                                      RecordCacheEntry cache) {
  auto onnx = openvino_backend::region_to_onnx(group);
  if (!onnx.ok()) return onnx.status();
  std::vector<rt_openvino::ArgType> args;
  try {
    for (const TensorType& t : group_argument_types(group))
      args.push_back({rt_openvino::element_type(static_cast<int32_t>(t.dtype)),
                      ov::Shape(t.shape.begin(), t.shape.end())});
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(str_cat("openvino cannot run the group: ", e.what()));
  }
  std::shared_ptr<const ov::Model> model;
  try {
    model = rt_openvino::core().read_model(*onnx, ov::Tensor());
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(str_cat("OpenVINO cannot read the group as ONNX: ",
                                              rt_openvino::exception_text(e)));
  }
  for (const auto& result : model->get_results())
    if (ov::as_type_ptr<const ov::op::v0::Parameter>(
            result->input_value(0).get_node_shared_ptr()))
      return absl::InvalidArgumentError(
          "openvino: an output of the group is one of its inputs unchanged (OpenVINO would "
          "not write it)");
  try {
    auto region = rt_openvino::compile_region(model, threads, std::move(args),
                                              group.inputs().size());
    return std::unique_ptr<Kernel>(
        new OpenvinoKernel(std::move(model), std::move(region), std::move(cache)));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(str_cat("OpenVINO cannot compile the group: ",
                                              rt_openvino::exception_text(e)));
  }
}

class OpenvinoBackend : public Backend {
 public:
  OpenvinoBackend()
      : Backend(std::string(kOpenvinoBackend), DeviceKind::cpu,
                str_cat("openvino-", rt_openvino::library_build(), "/1")) {
    openvino_backend::add_openvino_rules(*this);
  }

  // A region this compile built already is taken from the shelf (BuildOptions::shelf). With a
  // code cache, a region whose record an earlier compile made is not compiled again unless it is
  // run (an artifact build that measures nothing only needs the record).
  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions& options) const override {
    if (absl::Status s = require_plain_layouts(group, name()); !s.ok()) return s;
    const int32_t threads =
        options.num_threads > 0 ? options.num_threads
                                : static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
    if (options.code_cache.empty() && !options.shelf) return compile_group(group, threads, {});
    const uint64_t key = region_key(group, threads, rt_openvino::library_build(), version());
    if (options.shelf)
      if (std::shared_ptr<Kernel> kept = options.shelf->take(name(), key))
        return std::unique_ptr<Kernel>(new ShelvedKernel(std::move(kept)));
    absl::StatusOr<std::unique_ptr<Kernel>> kernel;
    std::optional<KernelRecord> record;
    if (!options.code_cache.empty()) record = read_cached_region(options.code_cache, key);
    if (record)
      kernel = std::unique_ptr<Kernel>(new CachedRegionKernel(
          std::move(*record), [group, threads] { return compile_group(group, threads, {}); }));
    else
      kernel = compile_group(group, threads,
                             options.code_cache.empty() ? RecordCacheEntry{}
                                                        : RecordCacheEntry{options.code_cache, key});
    if (!kernel.ok() || !options.shelf) return kernel;
    std::shared_ptr<Kernel> shared = *std::move(kernel);
    options.shelf->keep(name(), key, shared, region_bytes(group));
    return std::unique_ptr<Kernel>(new ShelvedKernel(std::move(shared)));
  }

 private:
  // What a compiled region holds: the model's constants, and OpenVINO's packed copy of them.
  static size_t region_bytes(const Graph& group) {
    size_t bytes = 0;
    for (const Tensor& c : group.constants()) bytes += c.bytes();
    return 2 * bytes;
  }
};

}  // namespace

std::unique_ptr<Backend> make_openvino_backend() {
  return std::make_unique<OpenvinoBackend>();
}

absl::Status register_openvino_backend(BackendRegistry& registry) {
  return registry.add(make_openvino_backend());
}

}  // namespace collage
