// Whole-model benchmark: each model placed by every strategy (single:dnnl, single:eigen, greedy,
// two-level, and single:native / single:openvino when backends of those names are registered)
// and run in process, alternated round by round with two peers, ONNX Runtime (CPU) and OpenVINO
// (CPU plugin, latency hint, f32), each in a child process that times itself
// (bench/models/peer_server.py); where OpenVINO is built in, also OpenVINO's C++ API in this
// process on the model file and on the ONNX bytes single:openvino hands it. Every contender uses
// --threads threads (2). The order of the contenders is shuffled each round, and every contender
// is followed by a pause of 100 ms (as are the untimed first runs), so that the thread teams that
// spin after their work (ONNX Runtime's, OpenVINO's TBB workers, OpenMP's) are asleep before the
// next one runs. Prints each contender's median latency and CPU time per
// run (of every thread of its process: this one, or the peer's), its ratios to
// ONNX Runtime and to OpenVINO, its largest error against ONNX Runtime's reference outputs, the
// speedup of two-level over the best single backend, and two-level against OpenVINO. Never fails
// on a timing.
//
//   model_bench [--small | --heldout] [--models a,b] [--rounds N] [--repeat N] [--budget S]
//               [--cost-db PATH] [--threads N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "bench_util.h"
#include "cli_args.h"
#include "cli_common.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/onnx.h"
#include "collage/passes.h"
#include "collage/thread_pool.h"
#include "openmp_wait.h"
#include "placement_cli.h"
#ifdef COLLAGE_HAVE_OPENVINO
#include "backends/openvino/region_onnx.h"
#include "ov_region.h"
#endif

namespace collage::bench {
namespace {

namespace fs = std::filesystem;
using cli::ArgParser;

struct Args {
  bool small = false;
  bool heldout = false;
  std::string models;
  int64_t rounds = 5, repeat = 3;
  // Enough for the graph-level search to breed generations once the cost database holds the
  // candidates' costs (DCGAN under load: 23 generations in 120 s; a 60 s budget on a cold
  // database went to the seeds alone, bench/RESULTS.md).
  std::string budget = "120";
  std::string cost_db;
  std::string strategies;  // empty: all
  bool no_winograd = false;
  std::string target;      // --target as given
  std::string target_cpu;  // resolved (resolve_native_target): "" for this machine
  std::string python = std::string(COLLAGE_SOURCE_DIR) + "/.venv/bin/python";
  int64_t threads = 2;
};

#ifdef COLLAGE_HAVE_OPENVINO
// OpenVINO's C++ API in this process, compiled with the properties the openvino backend uses
// (rt_openvino::compile_properties), its infer request bound to the inputs once and its outputs
// its own: on the model file itself, single:openvino against it is the integration's whole
// overhead, with no process or language between them; on the ONNX bytes the backend hands
// OpenVINO for the whole graph (region_to_onnx after collage's passes), the part of it that is
// not the graph.
class DirectOpenvino {
 public:
  DirectOpenvino(ov::CompiledModel compiled, const std::vector<Tensor>& inputs) {
    request_ = compiled.create_infer_request();
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = inputs[i];
      request_.set_input_tensor(
          i, ov::Tensor(rt_openvino::element_type(static_cast<int32_t>(t.dtype())),
                        ov::Shape(t.shape().begin(), t.shape().end()), const_cast<void*>(t.raw())));
    }
  }
  void run() { request_.infer(); }

 private:
  ov::InferRequest request_;
};
#endif

// A contender's timings and accuracy.
struct Row {
  std::string name;
  std::vector<double> ms;
  std::vector<double> cpu_ms;  // CPU time of the contender's whole process per run
  double error = -1;     // max |collage - ort| / max |ort| over the outputs; < 0: not measured
  std::string note;      // why it did not run, or the placement's size
  bool single = false;   // a single-backend placement
};

// Places, compiles and checks one strategy; nullopt (with the row's note) when it cannot run.
std::optional<CompiledModel> prepare(const Context& ctx, const BackendRegistry& backends,
                                     const Graph& g, const Args& args, double budget_s,
                                     ThreadPool& pool, const std::vector<Tensor>& inputs,
                                     const std::vector<Tensor>& expected, Row& row) {
  // "STRATEGY/plain": the strategy with every value between groups plain (no blocked layouts),
  // the before of the blocked layouts' before-and-after.
  const bool plain = row.name.ends_with("/plain");
  PlacementOptions o;
  o.strategy = plain ? row.name.substr(0, row.name.size() - 6) : row.name;
  o.target = args.target_cpu;
  o.channel_block = plain ? 0 : native_channel_block(args.target_cpu);
  // As BYOC does: what a single backend leaves goes to generated code when it is built in.
  if (backends.find("native")) o.fallback = "native";
  o.time_budget_s = budget_s;
  o.cost_db_path = args.cost_db.empty() ? cli::default_cost_db_path() : args.cost_db;
  // As `collage compile` does by default: two-level compares its choice with the single-backend
  // placements and keeps a faster one.
  o.compare_baselines = o.strategy == "two-level";
  const double start = now_ms();
  auto optimized = optimize_detailed(ctx, backends, g, o);
  if (!optimized.ok()) {
    row.note = std::string(optimized.status().message());
    return std::nullopt;
  }
  const Placement* placement = &optimized->placement;
  BuildOptions build;
  build.num_threads = pool.num_threads();
  build.target = o.target;
  build.channel_block = o.channel_block;
  auto model = compile_placement(ctx, backends, g, *placement, build, &pool);
  if (!model.ok()) {
    row.note = std::string(model.status().message());
    return std::nullopt;
  }
  // Which backends run how many groups, e.g. "openvino 3, native 2".
  std::vector<std::pair<std::string, int>> per_backend;
  for (const PlacedGroup& group : placement->groups) {
    auto it = std::find_if(per_backend.begin(), per_backend.end(),
                           [&](const auto& b) { return b.first == group.backend; });
    if (it == per_backend.end()) per_backend.push_back({group.backend, 1});
    else ++it->second;
  }
  std::string backends_used;
  for (const auto& [name, n] : per_backend)
    backends_used += absl::StrFormat("%s%s %d", backends_used.empty() ? "" : ", ", name, n);
  row.note = absl::StrFormat("%d groups (%s), placed in %.1f s", placement->groups.size(),
                             backends_used, (now_ms() - start) / 1000);
  if (o.strategy == "two-level")
    row.note += optimized->chosen_by == "remembered"
                    ? std::string("; an earlier search's choice, from the cost database")
                    : absl::StrFormat("; %d generations, %d placements measured, chose %s",
                                      optimized->generations, optimized->evaluations,
                                      optimized->chosen_by);
  auto outputs = model->run(inputs);
  if (!outputs.ok()) {
    row.note = std::string(outputs.status().message());
    return std::nullopt;
  }
  row.error = 0;
  for (size_t i = 0; i < outputs->size() && i < expected.size(); ++i)
    row.error = std::max(row.error, scaled_error((*outputs)[i], expected[i]));
  return std::move(*model);
}

// False when the model could not be loaded (load_cached_model said why).
bool bench_model(const std::string& name, const Args& args, double budget_s,
                 const BackendRegistry& backends) {
  const fs::path cache = model_cache();
  const fs::path model = cache / (name + ".onnx");
  Context ctx;
  std::optional<CachedModel> loaded = load_cached_model(ctx, name);
  if (!loaded) return false;
  const Graph& g = loaded->graph;
  const std::vector<Tensor>& inputs = loaded->inputs;
  const std::vector<Tensor>& expected = loaded->expected;

  std::vector<std::string> strategies = {"single:dnnl", "single:eigen"};
  if (backends.find("native")) strategies.push_back("single:native");
  if (backends.find("openvino")) strategies.push_back("single:openvino");
  strategies.insert(strategies.end(), {"greedy", "two-level"});
  if (!args.strategies.empty()) strategies = split_list(args.strategies);
  // One pool for every contender, as an application has: idle pools of the others would take
  // threads from the one running.
  ThreadPool pool(static_cast<int>(args.threads));
  std::vector<Row> rows;
  std::vector<std::optional<CompiledModel>> models;
  for (const std::string& s : strategies) {
    Row row;
    row.name = s;
    row.single = s.starts_with("single:");
    std::fprintf(stderr, "%s: placing %s\n", name.c_str(), s.c_str());
    models.push_back(prepare(ctx, backends, g, args, budget_s, pool, inputs, expected, row));
    rows.push_back(std::move(row));
  }
#ifdef COLLAGE_HAVE_OPENVINO
  // Timed through `direct` (no collage model): the model file, then the region's ONNX bytes.
  std::vector<std::optional<DirectOpenvino>> direct(rows.size());
  for (const bool file : {true, false}) {
    Row row;
    row.name = file ? "openvino (C++, in process)" : "openvino (C++, region's ONNX)";
    const ov::AnyMap properties = rt_openvino::compile_properties(static_cast<int>(args.threads));
    try {
      if (file) {
        direct.emplace_back().emplace(
            rt_openvino::core().compile_model(model.string(), "CPU", properties), inputs);
        row.note = "the model file, compiled as the openvino backend compiles";
      } else if (auto onnx = openvino_backend::region_to_onnx(g); onnx.ok()) {
        direct.emplace_back().emplace(
            rt_openvino::core().compile_model(rt_openvino::core().read_model(*onnx, ov::Tensor()),
                                              "CPU", properties),
            inputs);
        row.note = "what single:openvino hands OpenVINO, compiled and run as the row above";
      } else {
        row.note = std::string(onnx.status().message());
      }
    } catch (const std::exception& e) {
      row.note = rt_openvino::exception_text(e);
    }
    if (direct.size() == rows.size()) direct.emplace_back();
    rows.push_back(std::move(row));
    models.emplace_back();
  }
#endif
  // The peers, ONNX Runtime first (the reference of every ratio and error).
  struct Peer {
    std::optional<PeerProcess> process;
    Row row;
  };
  std::vector<Peer> peers(2);
  const char* peer_names[] = {"onnxruntime", "openvino"};
  const std::string peer_notes[] = {
      absl::StrFormat("%d threads, all graph optimisations", args.threads),
      absl::StrFormat("CPU plugin, %d threads, latency hint, f32, unpinned", args.threads)};
  const fs::path peer_outputs = fs::temp_directory_path() / ("model_bench_" + name + "_ov.npz");
  for (size_t p = 0; p < peers.size(); ++p) {
    std::string error;
    const bool with_outputs = p == 1;
    peers[p].process = PeerProcess::start(args.python, peer_names[p], model,
                                          cache / (name + ".inputs.npz"), static_cast<int>(args.threads),
                                          with_outputs ? peer_outputs : fs::path(), &error);
    peers[p].row.name = peer_names[p];
    peers[p].row.note = peers[p].process ? peer_notes[p] : error;
    if (peers[p].process && with_outputs) {
      std::vector<std::string> out_names;
      for (ValueId v : g.outputs()) out_names.push_back(g.value(v).name);
      if (auto outs = arrays_by_name(peer_outputs, out_names); outs.ok()) {
        peers[p].row.error = 0;
        for (size_t i = 0; i < outs->size() && i < expected.size(); ++i)
          peers[p].row.error = std::max(peers[p].row.error, scaled_error((*outs)[i], expected[i]));
      }
      fs::remove(peer_outputs);
    }
  }

  // Rounds: each contender runs `repeat` times in turn, in an order shuffled anew each round
  // (with a fixed seed), so that drift on a shared machine affects them alike and no contender
  // always follows the same one (what ran before moves caches and wakes or leaves thread teams);
  // a pause after each lets spinning thread teams sleep (ONNX Runtime's measured up to 1.7x
  // slower the contender after it). One untimed run each first.
  for (auto& m : models)
    if (m) (void)m->run(inputs);
#ifdef COLLAGE_HAVE_OPENVINO
  for (auto& d : direct)
    if (d) d->run();
#endif
  for (Peer& p : peers)
    if (p.process) (void)p.process->time(1);
  // The last of them, a peer, leaves its threads spinning in its process for milliseconds: the
  // first contender of the first round ran beside them, which on a short model moved that
  // contender's median (DCGAN, 1.5 ms a run: its five runs there took 2.3–3.4 ms, the later
  // ones 1.1–2.2).
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const size_t n = rows.size() + peers.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937 shuffle_rng(20261126);
  for (int64_t r = 0; r < args.rounds; ++r) {
    std::shuffle(order.begin(), order.end(), shuffle_rng);
    for (const size_t c : order) {
      if (c >= rows.size()) {
        Peer& p = peers[c - rows.size()];
        if (!p.process) continue;
        PeerProcess::Times t = p.process->time(args.repeat);
        p.row.ms.insert(p.row.ms.end(), t.wall.begin(), t.wall.end());
        p.row.cpu_ms.insert(p.row.cpu_ms.end(), t.cpu.begin(), t.cpu.end());
      } else {
#ifdef COLLAGE_HAVE_OPENVINO
        if (c < direct.size() && direct[c]) {
          for (int64_t i = 0; i < args.repeat; ++i) {
            const double c0 = process_cpu_ms(), t0 = now_ms();
            direct[c]->run();
            const double t1 = now_ms();
            rows[c].ms.push_back(t1 - t0);
            rows[c].cpu_ms.push_back(process_cpu_ms() - c0);
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          continue;
        }
#endif
        if (!models[c]) continue;
        for (int64_t i = 0; i < args.repeat; ++i) {
          const double c0 = process_cpu_ms(), t0 = now_ms();
          auto out = models[c]->run(inputs);
          const double t1 = now_ms(), c1 = process_cpu_ms();
          if (!out.ok()) continue;
          rows[c].ms.push_back(t1 - t0);
          rows[c].cpu_ms.push_back(c1 - c0);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  const double ort_ms = median(peers[0].row.ms), ov_ms = median(peers[1].row.ms);
  auto ratio = [](const Row& row, double peer_ms) {
    return row.ms.empty() || std::isnan(peer_ms) ? std::string()
                                                 : absl::StrFormat("%.2fx", median(row.ms) / peer_ms);
  };
  cli::TextTable t({false, true, true, true, true, true, false});
  t.add({"placement", "median ms", "cpu ms", "vs ORT", "vs OV", "max err", ""});
  const Row* best_single = nullptr;
  const Row* two_level = nullptr;
  for (const Row& row : rows) {
    const double ms = median(row.ms);
    if (row.single && !row.ms.empty() && (!best_single || ms < median(best_single->ms)))
      best_single = &row;
    if (row.name == "two-level" && !row.ms.empty()) two_level = &row;
  }
  std::vector<const Row*> all;
  for (const Row& row : rows) all.push_back(&row);
  for (const Peer& p : peers) all.push_back(&p.row);
  for (const Row* row : all)
    t.add({row->name, row->ms.empty() ? "-" : absl::StrFormat("%.3f", median(row->ms)),
           row->cpu_ms.empty() ? "-" : absl::StrFormat("%.3f", median(row->cpu_ms)),
           ratio(*row, ort_ms), ratio(*row, ov_ms),
           row->error < 0 ? "-" : absl::StrFormat("%.1e", row->error), row->note});
  std::string out = absl::StrFormat(
      "%s: %d nodes, %d rounds x %d runs each (alternating), cpu ms = CPU time of the "
      "contender's process per run (every thread), vs ORT / vs OV = collage / ONNX Runtime / "
      "OpenVINO, max err = max|x - ort| / max|ort| (ONNX Runtime's reference outputs)\n",
      name, g.nodes().size(), args.rounds, args.repeat);
  out += t.render(2);
  if (best_single && two_level)
    out += absl::StrFormat("  two-level vs the best single backend (%s): %.2fx faster\n",
                           best_single->name, median(best_single->ms) / median(two_level->ms));
  if (two_level && !std::isnan(ov_ms))
    out += absl::StrFormat("  two-level vs OpenVINO: %.2fx faster\n", ov_ms / median(two_level->ms));
  std::printf("%s\n", out.c_str());
  std::fflush(stdout);
  return true;
}

int run(int argc, char** argv) {
  Args args;
  ArgParser parser("model_bench",
                   "Times each model under every placement strategy, alternating with ONNX "
                   "Runtime\nand OpenVINO (CPU) in one run; prints medians, ratios, "
                   "errors and the\nspeedup of two-level over the best single backend and over "
                   "OpenVINO.");
  parser.flag("--small", "the width-reduced *_small models (a quick check)", &args.small);
  parser.flag("--heldout",
              "the held-out architectures, measured but not tuned for: mobilenet_v3_large,\n"
              "shufflenet_v2, mnasnet1_0, swin_t",
              &args.heldout);
  parser.option("--models", "LIST",
                "comma-separated model names (default, the bench set: resnet50, mobilenetv2,\n"
                "resnext50, bert, dcgan, googlenet, efficientnet_b0, regnet_y_400mf,\n"
                "squeezenet, inceptionv3, densenet121, convnext_tiny, vit_b_16, gpt2; with\n"
                "--small the _small variants of the first six)",
                &args.models);
  parser.option("--rounds", "N", "rounds (default 5)", &args.rounds, 1);
  parser.option("--repeat", "N", "timed runs of each contender per round (default 3)",
                &args.repeat, 1);
  parser.option("--budget", "SECONDS", "two-level placement budget per model (default 120)",
                &args.budget);
  parser.option("--cost-db", "PATH", "cost database (default: the CLI's)", &args.cost_db);
  parser.option("--strategies", "LIST",
                "comma-separated placement strategies (default: every single backend,\n"
                "greedy and two-level); STRATEGY/plain keeps every value plain (no\n"
                "blocked layouts between groups)",
                &args.strategies);
  parser.flag("--no-winograd",
              "the native backend builds 3x3 stride-1 convolutions directly only (the\n"
              "before of Winograd's before-and-after)",
              &args.no_winograd);
  parser.option("--target", "CPU",
                "the CPU generated code is built for: avx2, avx512, an LLVM CPU name\n"
                "(default: this machine); it sets the channel block (8 on AVX2)",
                &args.target);
  parser.option("--threads", "N",
                "threads of every contender: collage's pool and the kernels it builds,\n"
                "OpenVINO's inference threads, ONNX Runtime's intra-op threads (default 2)",
                &args.threads, 1);
  parser.option("--python", "PATH",
                "the Python with onnxruntime and openvino (default: the checkout's .venv)",
                &args.python);
  std::vector<std::string> raw(argv + 1, argv + argc);
  if (std::optional<int> exit = parser.parse(raw)) return *exit;
  const std::optional<double> budget_s = parse_seconds(args.budget);
  if (!budget_s) return parser.usage_error("--budget expects a number of seconds");
  absl::StatusOr<std::string> cpu = resolve_native_target(args.target);
  if (!cpu.ok()) return parser.usage_error("--target: " + std::string(cpu.status().message()));
  args.target_cpu = *cpu;

  std::vector<std::string> models = split_list(args.models);
  if (models.empty() && args.heldout) {
    models = {"mobilenet_v3_large", "shufflenet_v2", "mnasnet1_0", "swin_t"};
  } else if (models.empty()) {
    models = {"resnet50", "mobilenetv2", "resnext50", "bert", "dcgan", "googlenet"};
    if (args.small)
      for (std::string& m : models) m += "_small";
    else
      models.insert(models.end(), {"efficientnet_b0", "regnet_y_400mf", "squeezenet",
                                   "inceptionv3", "densenet121", "convnext_tiny", "vit_b_16",
                                   "gpt2"});
  }
  BackendRegistry backends;
  NativeBackendOptions native;
  if (args.no_winograd) native.winograd = NativeWinograd::off;
  if (absl::Status s = register_builtin_backends(backends, native); !s.ok()) {
    std::fprintf(stderr, "model_bench: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  int missing = 0;
  for (const std::string& m : models) {
    if (!bench_model(m, args, *budget_s, backends)) ++missing;
  }
  return missing ? 1 : 0;
}

}  // namespace
}  // namespace collage::bench

int main(int argc, char** argv) {
  // oneDNN's OpenMP workers must not spin on the cores the other backends' thread pool needs.
  collage::cli::use_passive_openmp_wait(argv);
  return collage::bench::run(argc, argv);
}
