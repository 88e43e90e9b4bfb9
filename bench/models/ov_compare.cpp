// What OpenVINO compiles from the openvino backend's region against what it compiles from the model
// file: for each model, the whole graph as single:openvino hands it over (region_to_onnx of the
// graph after collage's passes) and the .onnx file itself, both compiled with the backend's
// properties (rt_openvino::compile_properties) in this process. Compares the compiled models'
// runtime graphs node by node (type, implementation, output precisions and layouts, in execution
// order; inputs, outputs and constants aside), prints a table of node kinds and the first
// differing nodes, and times three contenders run by run in a shuffled order (no pauses: they
// share this process's OpenVINO threads): each compiled model's own infer request bound to the
// inputs ("region", "file"), and the region through the backend's Region on freshly allocated
// output buffers, as collage's executor runs it ("region, as run"). Medians of wall and process
// CPU ms, and of each run's ratio to the file's run of the same round.
//
//   ov_compare [--models a,b] [--runs N] [--threads N] [--dump DIR]
//
// --dump writes DIR/MODEL.region.onnx (the region's ONNX bytes) and DIR/MODEL.{region,file}.xml
// (each runtime model, serialized with its .bin).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "backends/common/module_kernel.h"
#include "backends/openvino/region_onnx.h"
#include "bench_util.h"
#include "cli_args.h"
#include "openvino/pass/serialize.hpp"
#include "ov_region.h"

namespace collage::bench {
namespace {

namespace fs = std::filesystem;

struct Args {
  std::string models = "resnext50,efficientnet_b0";
  int64_t runs = 60;
  int64_t threads = 2;
  std::string dump;
};

std::string rt_string(const ov::Node& n, const char* key) {
  const auto& info = n.get_rt_info();
  auto it = info.find(key);
  return it == info.end() ? std::string() : it->second.as<std::string>();
}

// One runtime node: what it is and how it runs.
struct RuntimeNode {
  std::string kind;  // "layerType/primitiveType [outputPrecisions] outputLayouts"
  std::string origin;  // originalLayersNames
};

std::vector<RuntimeNode> runtime_nodes(const ov::CompiledModel& compiled) {
  std::vector<RuntimeNode> out;
  for (const auto& n : compiled.get_runtime_model()->get_ordered_ops()) {
    const std::string type = rt_string(*n, "layerType");
    if (type == "Input" || type == "Output" || type == "Const") continue;
    out.push_back({absl::StrFormat("%s/%s [%s] %s", type, rt_string(*n, "primitiveType"),
                                   rt_string(*n, "outputPrecisions"),
                                   rt_string(*n, "outputLayouts")),
                   rt_string(*n, "originalLayersNames")});
  }
  return out;
}

// Prints the node kinds of both and the differing positions; returns their count.
size_t compare_graphs(const ov::CompiledModel& region, const ov::CompiledModel& file) {
  const auto a = runtime_nodes(region), b = runtime_nodes(file);
  std::map<std::string, std::pair<int, int>> kinds;
  for (const RuntimeNode& n : a) ++kinds[n.kind].first;
  for (const RuntimeNode& n : b) ++kinds[n.kind].second;
  std::printf("  %-70s %6s %6s\n", "runtime node [output precisions] layouts", "region", "file");
  for (const auto& [k, n] : kinds)
    std::printf("  %-70s %6d %6d%s\n", k.c_str(), n.first, n.second,
                n.first == n.second ? "" : "  *");
  size_t differ = 0;
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string ka = i < a.size() ? a[i].kind : "-", kb = i < b.size() ? b[i].kind : "-";
    if (ka == kb) continue;
    if (++differ <= 10)
      std::printf("  node %zu differs: region %s (%s), file %s (%s)\n", i, ka.c_str(),
                  i < a.size() ? a[i].origin.substr(0, 60).c_str() : "",
                  kb.c_str(), i < b.size() ? b[i].origin.substr(0, 60).c_str() : "");
  }
  std::printf("  %zu and %zu runtime nodes, %zu positions differ\n", a.size(), b.size(), differ);
  return differ;
}

ov::InferRequest bound_request(ov::CompiledModel& compiled,
                               const std::vector<Tensor>& inputs) {
  ov::InferRequest request = compiled.create_infer_request();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    request.set_input_tensor(
        i, ov::Tensor(rt_openvino::element_type(static_cast<int32_t>(t.dtype())),
                      ov::Shape(t.shape().begin(), t.shape().end()), const_cast<void*>(t.raw())));
  }
  return request;
}

bool compare(const std::string& name, const Args& args) {
  Context ctx;
  std::optional<CachedModel> loaded = load_cached_model(ctx, name);
  if (!loaded) return false;
  const Graph& g = loaded->graph;
  auto onnx = openvino_backend::region_to_onnx(g);
  if (!onnx.ok()) {
    std::printf("%s: %s\n", name.c_str(), std::string(onnx.status().message()).c_str());
    return false;
  }
  const int threads = static_cast<int>(args.threads);
  struct Contender {
    std::string name;
    std::function<void()> run;
    std::vector<double> ms, cpu_ms, ratio;
  };
  std::vector<Contender> cs;
  ov::CompiledModel region, file;
  try {
    region = rt_openvino::core().compile_model(rt_openvino::core().read_model(*onnx, ov::Tensor()),
                                               "CPU", rt_openvino::compile_properties(threads));
    file = rt_openvino::core().compile_model((model_cache() / (name + ".onnx")).string(), "CPU",
                                             rt_openvino::compile_properties(threads));
    for (const auto& [label, compiled] : {std::pair{"region", &region}, std::pair{"file", &file}}) {
      auto request = std::make_shared<ov::InferRequest>(bound_request(*compiled, loaded->inputs));
      cs.push_back({label, [request] { request->infer(); }, {}, {}, {}});
    }
    std::vector<rt_openvino::ArgType> types;
    for (const TensorType& t : group_argument_types(g))
      types.push_back({rt_openvino::element_type(static_cast<int32_t>(t.dtype)),
                       ov::Shape(t.shape.begin(), t.shape.end())});
    auto as_run = std::make_shared<rt_openvino::Region>(
        region, threads, [] { return std::shared_ptr<const ov::Model>(); }, std::move(types),
        g.inputs().size());
    const std::vector<Tensor>* inputs = &loaded->inputs;
    cs.push_back({"region, as run", [as_run, inputs, &g] {
                    std::vector<Tensor> outs;
                    std::vector<void*> ptrs;
                    for (const Tensor& t : *inputs) ptrs.push_back(const_cast<void*>(t.raw()));
                    for (ValueId v : g.outputs()) ptrs.push_back(outs.emplace_back(g.value(v).type.dtype, g.value(v).type.shape).raw());
                    as_run->run(ptrs.data());
                  }, {}, {}, {}});
    for (Contender& c : cs) c.run();  // allocates, pages the weights in
  } catch (const std::exception& e) {
    std::printf("%s: %s\n", name.c_str(), rt_openvino::exception_text(e).c_str());
    return false;
  }
  if (!args.dump.empty()) {
    fs::create_directories(args.dump);
    std::ofstream(fs::path(args.dump) / (name + ".region.onnx"), std::ios::binary) << *onnx;
    for (const auto& [label, compiled] : {std::pair{"region", &region}, std::pair{"file", &file}}) {
      const std::string stem = (fs::path(args.dump) / (name + "." + label)).string();
      ov::pass::Serialize(stem + ".xml", stem + ".bin")
          .run_on_model(compiled->get_runtime_model()->clone());
    }
  }
  std::vector<size_t> order(cs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937 rng(20261126);
  for (int64_t r = 0; r < args.runs; ++r) {
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t k : order) {
      const double c0 = process_cpu_ms(), t0 = now_ms();
      cs[k].run();
      const double t1 = now_ms();
      cs[k].ms.push_back(t1 - t0);
      cs[k].cpu_ms.push_back(process_cpu_ms() - c0);
    }
    for (Contender& c : cs) c.ratio.push_back(c.ms.back() / cs[1].ms.back());
  }
  std::printf("%s: %d threads, %lld runs each\n", name.c_str(), threads,
              static_cast<long long>(args.runs));
  for (const Contender& c : cs)
    std::printf("  %-16s %9.3f ms  cpu %9.3f ms  / file (paired) %.3f\n", c.name.c_str(),
                median(c.ms), median(c.cpu_ms), median(c.ratio));
  compare_graphs(region, file);
  std::printf("\n");
  std::fflush(stdout);
  return true;
}

int run(int argc, char** argv) {
  Args args;
  cli::ArgParser parser("ov_compare",
                        "Compiles each model's single:openvino region and its model file with "
                        "OpenVINO in\nprocess, compares the runtime graphs node by node and times "
                        "both.");
  parser.option("--models", "LIST",
                "comma-separated model names (default resnext50,efficientnet_b0)", &args.models);
  parser.option("--runs", "N", "timed runs of each contender (default 60)", &args.runs, 1);
  parser.option("--threads", "N", "OpenVINO inference threads (default 2)", &args.threads, 1);
  parser.option("--dump", "DIR", "write the region's ONNX and both runtime models here",
                &args.dump);
  std::vector<std::string> raw(argv + 1, argv + argc);
  if (std::optional<int> exit = parser.parse(raw)) return *exit;
  int failed = 0;
  for (const std::string& m : split_list(args.models))
    if (!compare(m, args)) ++failed;
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace collage::bench

int main(int argc, char** argv) { return collage::bench::run(argc, argv); }
