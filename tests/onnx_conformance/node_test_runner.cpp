// One ONNX node test: import, run (reference or placed), compare with the expected outputs.
#include "onnx_conformance/node_test_runner.h"

#include <cmath>
#include <exception>
#include <fstream>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "collage/executor.h"
#include "collage/onnx.h"
#include "collage/passes.h"
#include "collage/placement.h"
#include "collage/reference.h"
#include "frontends/onnx/onnx_tensor.h"

namespace collage::testing {
namespace {

constexpr double kRtol = 1e-3, kAtol = 1e-5;

absl::StatusOr<Tensor> read_pb(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  onnx::TensorProto proto;
  if (!in || !proto.ParseFromIstream(&in))
    return absl::InvalidArgumentError("cannot parse " + file.string());
  return onnx_import::tensor_from_proto(proto, {file.parent_path(), file.string()});
}

// The test's input_<i>.pb or output_<i>.pb files in order.
absl::StatusOr<std::vector<Tensor>> read_set(const std::filesystem::path& dir,
                                             const std::string& kind) {
  std::vector<Tensor> out;
  for (int i = 0;; ++i) {
    const auto file = dir / (kind + "_" + std::to_string(i) + ".pb");
    if (!std::filesystem::exists(file)) return out;
    auto t = read_pb(file);
    if (!t.ok()) return t.status();
    out.push_back(*std::move(t));
  }
}

NodeTestResult refused_or_crash(std::string name, const absl::Status& s, std::string_view stage) {
  const Verdict v = s.code() == absl::StatusCode::kInternal ? Verdict::crash : Verdict::refused;
  return {std::move(name), v, std::string(stage) + ": " + std::string(s.message())};
}

absl::StatusOr<std::vector<Tensor>> run_graph(const Context& ctx, const Graph& g,
                                              const std::vector<Tensor>& inputs,
                                              const NodeTestMode& mode) {
  if (!mode.backends) return run_reference(g, inputs);
  PlacementOptions po;
  po.strategy = "greedy";
  po.fallback = "native";
  po.num_threads = 1;
  for (const Backend* b : mode.backends->all())
    if (b->name() != kReferenceBackend) po.backends.push_back(b->name());
  auto placement = optimize(ctx, *mode.backends, g, po);
  if (!placement.ok()) return placement.status();
  BuildOptions bo;
  bo.num_threads = 1;
  auto model = compile_placement(ctx, *mode.backends, g, *placement, bo);
  if (!model.ok()) return model.status();
  return model->run(inputs);
}

NodeTestResult run_checked(const Context& ctx, const std::filesystem::path& dir,
                           const NodeTestMode& mode) {
  std::string name = dir.filename().string();
  auto g = import_onnx_file(ctx, dir / "model.onnx");
  if (!g.ok()) return refused_or_crash(name, g.status(), "import");
  auto passed = run_passes(ctx, *g);
  if (!passed.ok()) return refused_or_crash(name, passed.status(), "passes");
  auto inputs = read_set(dir / "test_data_set_0", "input");
  if (!inputs.ok()) return refused_or_crash(name, inputs.status(), "test data");
  auto expected = read_set(dir / "test_data_set_0", "output");
  if (!expected.ok()) return refused_or_crash(name, expected.status(), "test data");
  auto outputs = run_graph(ctx, *passed, *inputs, mode);
  if (!outputs.ok()) return refused_or_crash(name, outputs.status(), "run");
  if (outputs->size() != expected->size())
    return {name, Verdict::wrong,
            "gave " + std::to_string(outputs->size()) + " outputs, expected " +
                std::to_string(expected->size())};
  for (size_t i = 0; i < expected->size(); ++i) {
    std::string why = compare_outputs((*outputs)[i], (*expected)[i]);
    if (!why.empty()) return {name, Verdict::wrong, "output " + std::to_string(i) + ": " + why};
  }
  return {name, Verdict::pass, ""};
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass: return "pass";
    case Verdict::wrong: return "wrong";
    case Verdict::refused: return "refused";
    case Verdict::crash: return "crash";
  }
  return "?";
}

std::string compare_outputs(const Tensor& actual, const Tensor& expected) {
  if (actual.dtype() != expected.dtype())
    return std::string("element type ") + std::string(dtype_name(actual.dtype())) + ", expected " +
           std::string(dtype_name(expected.dtype()));
  if (actual.shape() != expected.shape())
    return "shape " + shape_to_string(actual.shape()) + ", expected " +
           shape_to_string(expected.shape());
  if (actual.bytes() == 0) return "";
  if (actual.dtype() == DType::str) {
    for (int64_t i = 0; i < actual.numel(); ++i)
      if (actual.data<std::string>()[i] != expected.data<std::string>()[i])
        return "element " + std::to_string(i) + " is '" + actual.data<std::string>()[i] +
               "', expected '" + expected.data<std::string>()[i] + "'";
    return "";
  }
  if (!is_float(actual.dtype())) {
    if (std::memcmp(actual.raw(), expected.raw(), actual.bytes()) == 0) return "";
    for (int64_t i = 0; i < actual.numel(); ++i)
      if (actual.get_as_int64(i) != expected.get_as_int64(i)) {
        std::ostringstream os;
        os << "element " << i << " is " << actual.get_as_int64(i) << ", expected "
           << expected.get_as_int64(i);
        return os.str();
      }
    return "";
  }
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.get_as_double(i), e = expected.get_as_double(i);
    const bool ok = (std::isnan(a) && std::isnan(e)) || a == e ||
                    std::fabs(a - e) <= kAtol + kRtol * std::fabs(e);
    if (!ok && bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  std::ostringstream os;
  os << bad << " of " << actual.numel() << " elements differ; element " << first << " is "
     << actual.get_as_double(first) << ", expected " << expected.get_as_double(first);
  return os.str();
}

NodeTestResult run_node_test(const Context& ctx, const std::filesystem::path& dir,
                             const NodeTestMode& mode) {
  try {
    return run_checked(ctx, dir, mode);
  } catch (const std::exception& e) {
    return {dir.filename().string(), Verdict::crash, std::string("exception: ") + e.what()};
  } catch (...) {
    return {dir.filename().string(), Verdict::crash, "unknown exception"};
  }
}

std::map<std::string, std::string> read_ort_verdicts(const std::filesystem::path& file) {
  std::map<std::string, std::string> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    const auto tab2 = line.find('\t', tab + 1);
    out[line.substr(0, tab)] = line.substr(tab + 1, tab2 == std::string::npos ? tab2 : tab2 - tab - 1);
  }
  return out;
}

}  // namespace collage::testing
