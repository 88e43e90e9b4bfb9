// Region: port checks, infer requests bound to the caller's buffers, thread-count variants.
#include "ov_region.h"

#include <sstream>

#include "collage/runtime_module.h"
#include "openvino/core/version.hpp"
#include "openvino/runtime/properties.hpp"
#include "ov_record.h"

namespace collage::rt_openvino {

ov::Core& core() {
  static ov::Core c;
  return c;
}

std::string library_build() {
  return ov::get_openvino_version().buildNumber;
}

ov::AnyMap compile_properties(int32_t threads) {
  return {ov::hint::performance_mode(ov::hint::PerformanceMode::LATENCY),
          ov::hint::inference_precision(ov::element::f32),
          ov::hint::enable_cpu_pinning(false),
          ov::inference_num_threads(threads),
          ov::num_streams(1)};
}

std::string exception_text(const std::exception& e) {
  // OpenVINO prefixes each level of a rethrown error with "Exception from FILE:LINE:".
  std::istringstream lines(e.what());
  std::string line, out;
  while (std::getline(lines, line)) {
    if (line.empty() || line.rfind("Exception from ", 0) == 0) continue;
    out += (out.empty() ? "" : " ") + line;
  }
  return out.empty() ? e.what() : out;
}

ov::element::Type element_type(int32_t dtype) {
  switch (dtype) {
    case COLLAGE_DTYPE_F32:
      return ov::element::f32;
    case COLLAGE_DTYPE_F16:
      return ov::element::f16;
    case COLLAGE_DTYPE_BF16:
      return ov::element::bf16;
    case COLLAGE_DTYPE_I8:
      return ov::element::i8;
    case COLLAGE_DTYPE_I32:
      return ov::element::i32;
    case COLLAGE_DTYPE_I64:
      return ov::element::i64;
    case COLLAGE_DTYPE_BOOL:
      return ov::element::boolean;
  }
  throw RecordError("dtype " + std::to_string(dtype) + " has no OpenVINO element type");
}

namespace {

void check_ports(const std::vector<ov::Output<const ov::Node>>& ports, const char* kind,
                 const std::vector<ArgType>& args, size_t first, size_t count) {
  if (ports.size() != count)
    throw RecordError(std::string("the compiled model has ") + std::to_string(ports.size()) + " " +
                      kind + "s, the kernel " + std::to_string(count));
  for (size_t i = 0; i < count; ++i) {
    const ArgType& a = args[first + i];
    const ov::Output<const ov::Node>& p = ports[i];
    if (p.get_element_type() != a.type || p.get_partial_shape() != ov::PartialShape(a.shape))
      throw RecordError(std::string(kind) + " " + std::to_string(i) + " of the compiled model is " +
                        p.get_element_type().get_type_name() + " " +
                        p.get_partial_shape().to_string() + ", the kernel's " +
                        a.type.get_type_name() + " " + ov::PartialShape(a.shape).to_string());
  }
}

}  // namespace

Region::Region(ov::CompiledModel compiled, int32_t threads, ModelSource source,
               std::vector<ArgType> args, size_t num_inputs)
    : source_(std::move(source)), args_(std::move(args)), num_inputs_(num_inputs) {
  if (num_inputs_ > args_.size()) throw RecordError("more inputs than arguments");
  check_ports(compiled.inputs(), "input", args_, 0, num_inputs_);
  check_ports(compiled.outputs(), "output", args_, num_inputs_, args_.size() - num_inputs_);
  full_.compiled = std::move(compiled);
  full_.threads = threads;
}

Region::Variant& Region::variant(int32_t max_threads) {
  if (max_threads < 1)
    throw RecordError("a region cannot run on " + std::to_string(max_threads) + " threads");
  if (max_threads >= full_.threads) return full_;
  std::lock_guard<std::mutex> lock(variants_mu_);
  std::unique_ptr<Variant>& v = variants_[max_threads];
  if (!v) {
    auto made = std::make_unique<Variant>();
    made->compiled = core().compile_model(source_(), "CPU", compile_properties(max_threads));
    made->threads = max_threads;
    v = std::move(made);
  }
  return *v;
}

void Region::run_on(Variant& v, void* const* args) {
  Bound b;
  {
    std::lock_guard<std::mutex> lock(v.mu);
    if (!v.idle.empty()) {
      b = std::move(v.idle.back());
      v.idle.pop_back();
    }
  }
  if (!b.request) {
    b.request = v.compiled.create_infer_request();
    b.args.assign(args_.size(), nullptr);
  }
  // The caller's buffers, bound in place (OpenVINO reads and writes them without a copy where
  // its layouts allow); those of the last run on this request are bound already.
  for (size_t i = 0; i < args_.size(); ++i) {
    if (b.args[i] == args[i]) continue;
    ov::Tensor t(args_[i].type, args_[i].shape, args[i]);
    if (i < num_inputs_)
      b.request.set_input_tensor(i, t);
    else
      b.request.set_output_tensor(i - num_inputs_, t);
    b.args[i] = args[i];
  }
  b.request.infer();
  std::lock_guard<std::mutex> lock(v.mu);
  v.idle.push_back(std::move(b));
}

}  // namespace collage::rt_openvino
