// `collage run`: imports a model, optimises it, places it on the backends (two-level by default,
// with a short budget and the cost database) and runs the placed kernels in process, or runs it
// with the reference executor; or runs an artifact (told apart by its magic) through the runtime
// library. Prints the median time and a summary of each output.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>

#include "absl/strings/str_format.h"
#include "artifact_runner.h"
#include "cli_common.h"
#include "collage/compiler.h"
#include "collage/executor.h"
#include "collage/npz.h"
#include "collage/reference.h"
#include "collage/trees.h"
#include "core/str_cat.h"
#include "placement_cli.h"

namespace collage::cli {
namespace {

struct RunArgs {
  ModelArgs model;
  std::string inputs, outputs;
  int64_t repeat = 1, warmup = 0, seed = 0;
  bool no_passes = false;
  PlacementArgs placement;  // strategy "reference": the reference executor, no placement
  std::string executor;       // --executor KIND (artifacts): waves or sequential
  bool no_recompile = false;  // --no-recompile (artifacts): COLLAGE_LOAD_NO_RECOMPILE
  std::string profile;        // --profile FILE (artifacts): Chrome trace of the timed runs
};

constexpr std::string_view kRandomInputs =
    "Without --inputs every graph input gets random values: input i (in graph order) is\n"
    "drawn from a std::mt19937_64 seeded with SEED + i; floating-point inputs are uniform\n"
    "in [-1, 1), integer inputs uniform in [0, 10), bool inputs 0 or 1. With --inputs the\n"
    "archive must hold exactly one array per graph input, with the input's name, dtype and\n"
    "shape. Outputs are written under the graph outputs' names.";

// What `run` executes: an imported graph on the reference executor, or an artifact on the
// runtime.
struct Runnable {
  std::vector<std::string> input_names, output_names;
  std::vector<TensorType> input_types;  // a dynamic-batch artifact's at its largest batch
  std::vector<int> batch_axes;          // per input; empty or -1: the size must be as above
  std::string description;  // "12 nodes", "artifact, arena 1.2 MiB"
  // One run on the inputs; the second argument is the previous run's outputs (empty at first),
  // whose buffers an artifact takes and writes again.
  std::function<absl::StatusOr<std::vector<Tensor>>(const std::vector<Tensor>&,
                                                    std::vector<Tensor>&)>
      run;
};

std::string names_of(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& name : names) s += str_cat(s.empty() ? "" : ", ", name);
  return s;
}

Tensor random_tensor(const TensorType& type, uint64_t seed) {
  Tensor t(type.dtype, type.shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> real(-1.f, 1.f);
  std::uniform_int_distribution<int> digit(0, 9), bit(0, 1);
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (type.dtype) {
      case DType::f32:
        t.data<float>()[i] = real(rng);
        break;
      case DType::f16:
        t.data<uint16_t>()[i] = float_to_half(real(rng));
        break;
      case DType::bf16:
        t.data<uint16_t>()[i] = float_to_bfloat16(real(rng));
        break;
      case DType::i8:
        t.data<int8_t>()[i] = static_cast<int8_t>(digit(rng));
        break;
      case DType::i32:
        t.data<int32_t>()[i] = digit(rng);
        break;
      case DType::i64:
        t.data<int64_t>()[i] = digit(rng);
        break;
      case DType::boolean:
        t.data<uint8_t>()[i] = static_cast<uint8_t>(bit(rng));
        break;
      case DType::f64:
        t.data<double>()[i] = real(rng);
        break;
      case DType::i16:
        t.data<int16_t>()[i] = static_cast<int16_t>(digit(rng));
        break;
      case DType::u8:
        t.data<uint8_t>()[i] = static_cast<uint8_t>(digit(rng));
        break;
      case DType::u16:
        t.data<uint16_t>()[i] = static_cast<uint16_t>(digit(rng));
        break;
      case DType::u32:
        t.data<uint32_t>()[i] = static_cast<uint32_t>(digit(rng));
        break;
      case DType::u64:
        t.data<uint64_t>()[i] = static_cast<uint64_t>(digit(rng));
        break;
      case DType::str:
        t.data<std::string>()[i] = std::to_string(digit(rng));
        break;
    }
  }
  return t;
}

// One tensor per graph input, in graph order: from the archive, matched by name, or random.
absl::StatusOr<std::vector<Tensor>> make_inputs(const Runnable& r, const RunArgs& args) {
  std::vector<Tensor> inputs;
  if (args.inputs.empty()) {
    for (size_t i = 0; i < r.input_types.size(); ++i)
      inputs.push_back(random_tensor(r.input_types[i], static_cast<uint64_t>(args.seed) + i));
    return inputs;
  }
  auto arrays = read_npz(args.inputs);
  if (!arrays.ok()) return arrays.status();
  for (size_t i = 0; i < r.input_names.size(); ++i) {
    const std::string& name = r.input_names[i];
    const TensorType& type = r.input_types[i];
    auto it = std::find_if(arrays->begin(), arrays->end(),
                           [&](const auto& a) { return a.first == name; });
    if (it == arrays->end())
      return absl::InvalidArgumentError(str_cat(args.inputs, ": no array for graph input '", name,
                                                "' (", type_to_string(type), ")"));
    TensorType want = type;
    const int axis = r.batch_axes.empty() ? -1 : r.batch_axes[i];
    if (axis >= 0 && it->second.rank() == static_cast<int64_t>(want.shape.size()))
      want.shape[axis] = it->second.shape()[axis];  // the runtime checks the batch's range
    if (it->second.type() != want)
      return absl::InvalidArgumentError(
          str_cat(args.inputs, ": array '", name, "' is ", type_to_string(it->second.type()),
                  ", but graph input '", name, "' is ", type_to_string(type)));
    inputs.push_back(it->second);
  }
  for (const auto& [name, t] : *arrays) {
    const bool known =
        std::find(r.input_names.begin(), r.input_names.end(), name) != r.input_names.end();
    if (!known)
      return absl::InvalidArgumentError(
          str_cat(args.inputs, ": array '", name,
                  "' matches no graph input (inputs: ", names_of(r.input_names), ")"));
  }
  return inputs;
}

// "min -0.98 max 0.99 mean 0.012" (and the NaN count when there are any); for strings, the
// first few: "'setosa' 'virginica' 'setosa' ...".
std::string summarize(const Tensor& t) {
  if (t.numel() == 0) return "empty";
  if (t.dtype() == DType::str) {
    std::string s;
    for (int64_t i = 0; i < t.numel() && i < 3; ++i) {
      const std::string& v = t.data<std::string>()[i];
      s += str_cat(i ? " '" : "'", v.substr(0, 24), v.size() > 24 ? "...'" : "'");
    }
    return t.numel() > 3 ? s + " ..." : s;
  }
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t nans = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.get_as_double(i);
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  if (nans == t.numel()) return "all NaN";
  std::string s = absl::StrFormat("min %.6g  max %.6g  mean %.6g", lo, hi,
                                  sum / static_cast<double>(t.numel() - nans));
  if (nans) s += absl::StrFormat("  NaN %d", nans);
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void declare(ArgParser& parser, RunArgs& args) {
  args.model.declare(parser);
  parser.option("--inputs", "FILE.npz", "input arrays, one per graph input, by name", &args.inputs);
  parser.option("--outputs", "FILE.npz", "write the outputs here, by graph output name",
                &args.outputs);
  parser.option("--repeat", "N", "timed runs; the median is reported (default 1)", &args.repeat, 1);
  parser.option("--warmup", "N", "untimed runs before the timed ones (default 0)", &args.warmup, 0);
  parser.option("--seed", "SEED", "seed of the random inputs (default 0)", &args.seed, 0);
  parser.flag("--no-passes", "run the graph as imported, without the optimisation passes",
              &args.no_passes);
  args.placement.budget = "10";
  args.placement.declare(parser, /*with_strategy=*/true, "--placement-seed");
  parser.epilog(
      str_cat("An ONNX model is placed on the backends (--placement, default two-level with a\n"
              "10 s budget, costs reused from the cost database) and its kernels run in process;\n"
              "--placement reference runs the reference executor instead (no placement).\n"
              "XGBoost and LightGBM models are placed greedily unless --placement is given.\n\n",
              kRandomInputs));
  parser.option("--executor", "KIND",
                "artifacts: run with the wave executor (inter-operator parallelism) or\n"
                "the sequential one; default: the one the compiler measured faster",
                &args.executor);
  parser.flag("--no-recompile",
              "artifacts: fail when a kernel's precompiled form does not fit this machine's\n"
              "library (an OpenVINO blob of another OpenVINO build) instead of compiling it\n"
              "again from the model the artifact carries",
              &args.no_recompile);
  parser.option("--profile", "FILE",
                "artifacts: write each kernel's time in the timed runs as a Chrome trace\n"
                "(chrome://tracing, Perfetto)",
                &args.profile);
}

// An artifact, run by the runtime library through `artifact` (which must outlive the result).
absl::StatusOr<Runnable> artifact_runnable(const RunArgs& args,
                                           std::optional<ArtifactRunner>& artifact) {
  auto loaded =
      ArtifactRunner::load(args.model.model, args.executor, /*num_threads=*/0, args.no_recompile);
  if (!loaded.ok()) return loaded.status();
  artifact = std::move(*loaded);
  if (const std::string notes = artifact->load_notes(); !notes.empty())
    std::fprintf(stderr, "collage run: %s\n", notes.c_str());
  return Runnable{artifact->input_names(), artifact->output_names(), artifact->input_types(),
                  artifact->input_batch_axes(),
                  "artifact, arena " + human_bytes(static_cast<int64_t>(artifact->arena_bytes())),
                  [&artifact](const std::vector<Tensor>& in, std::vector<Tensor>& previous) {
                    return artifact->run(in, previous);
                  }};
}

// A model file, imported and run on the reference executor (--placement reference) or placed and
// run in process, kernel after kernel.
absl::StatusOr<Runnable> model_runnable(RunArgs& args, bool strategy_given) {
  if (!args.executor.empty() || !args.profile.empty())
    return absl::InvalidArgumentError(str_cat(args.executor.empty() ? "--profile" : "--executor",
                                              " applies to artifacts (collage compile output)"));
  if (absl::Status s = refuse_ranges(args.model, "run"); !s.ok()) return s;
  auto made = make_compiler(
      args.placement.plugins,
      args.placement.no_winograd ? NativeWinograd::off : NativeWinograd::measure);
  if (!made.ok()) return made.status();
  auto compiler = std::make_shared<Compiler>(*std::move(made));
  // XGBoost and LightGBM models run placed (greedy: the trees backend's TreeEnsemble kernel)
  // rather than on the reference executor, unless --placement names another strategy.
  auto format = parse_model_format(args.model.format);
  if (format.ok() && *format == ModelFormat::automatic)
    format = detect_model_format(args.model.model);
  if (!strategy_given && format.ok() &&
      (*format == ModelFormat::xgboost || *format == ModelFormat::lightgbm))
    args.placement.strategy = "greedy";
  CompileOptions options;
  auto import = args.model.import_options();
  if (!import.ok()) return import.status();
  options.import = *std::move(import);
  options.tree_strategy = {/*measured=*/false, TreeStrategy::automatic};
  options.passes = !args.no_passes;
  options.artifact = false;
  auto imported = compiler->import_model(ModelSource::file(args.model.model), options);
  if (!imported.ok()) return imported.status();
  auto g = std::make_shared<const Graph>(std::move(imported->graph));
  Runnable runnable;
  for (ValueId v : g->inputs()) {
    runnable.input_names.push_back(g->value(v).name);
    runnable.input_types.push_back(g->value(v).type);
  }
  for (ValueId v : g->outputs()) runnable.output_names.push_back(g->value(v).name);
  runnable.description = str_cat(g->nodes().size(), " nodes");
  if (args.placement.strategy == kReferenceBackend) {
    // The graph refers to the compiler's context: the run keeps it alive.
    runnable.run = [compiler, g](const std::vector<Tensor>& in, std::vector<Tensor>&) {
      return run_reference(*g, in);
    };
    return runnable;
  }
  PlacementOptions placement = args.placement.options();
  placement.executor = PlacementExecutor::sequential;
  ProgressLine line;
  placement.progress = with_progress_line(line, nullptr);
  auto placed = optimize(compiler->context(), compiler->backends(), *g, placement);
  line.finish();
  if (!placed.ok()) return placed.status();
  BuildOptions build;
  build.target = placement.target;
  build.code_cache = placement.code_cache;
  build.channel_block = placement.channel_block;
  auto model = compile_placement(compiler->context(), compiler->backends(), *g, *placed, build);
  if (!model.ok()) return model.status();
  runnable.description +=
      str_cat(", ", placed->groups.size(), " groups placed ", args.placement.strategy);
  // The kernels refer to the compiler's backends and context: the run keeps them alive.
  runnable.run = [compiler, g, model = std::make_shared<CompiledModel>(*std::move(model))](
                     const std::vector<Tensor>& in,
                     std::vector<Tensor>&) { return model->run(in); };
  return runnable;
}

// The warmup and timed runs: the timed runs' wall times and the last run's outputs. With
// --profile the artifact's profiling is on for the timed runs.
absl::Status time_runs(const Runnable& runnable, const RunArgs& args,
                       const std::vector<Tensor>& inputs, std::optional<ArtifactRunner>& artifact,
                       std::vector<double>& times_ms, std::vector<Tensor>& outputs) {
  for (int64_t i = 0; i < args.warmup + args.repeat; ++i) {
    if (i == args.warmup && !args.profile.empty()) {
      if (absl::Status s = artifact->set_profiling(true); !s.ok()) return s;
    }
    // An artifact writes the previous run's output buffers again (an application keeps them),
    // so a run's time is not that of allocating and clearing its outputs; what it does not take
    // is freed outside the timing.
    const auto start = std::chrono::steady_clock::now();
    auto result = runnable.run(inputs, outputs);
    const auto stop = std::chrono::steady_clock::now();
    if (!result.ok()) return result.status();
    if (i >= args.warmup)
      times_ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    outputs = *std::move(result);
  }
  return absl::OkStatus();
}

// The timing line, the artifact executor's statistics, and the outputs' table.
std::string report(const Runnable& runnable, const RunArgs& args,
                   const std::vector<double>& times_ms, const std::vector<Tensor>& outputs,
                   const std::optional<ArtifactRunner>& artifact) {
  std::string out = absl::StrFormat(
      "%s: %s, median %.3f ms over %d run%s (min %.3f, max %.3f), %d warmup\n", args.model.model,
      runnable.description, median(times_ms), times_ms.size(), times_ms.size() == 1 ? "" : "s",
      *std::min_element(times_ms.begin(), times_ms.end()),
      *std::max_element(times_ms.begin(), times_ms.end()), args.warmup);
  if (artifact) {
    const collage_executor_stats_t st = artifact->executor_stats();
    out += absl::StrFormat("executor %s", st.executor);
    if (st.runs > 0) {
      const double runs = static_cast<double>(st.runs);
      out += absl::StrFormat(
          " over %d runs with warmup: per run %.3f ms, scheduling overhead %.1f us (%.2f%%), "
          "worker wake-up %.1f us, waiting %.1f us",
          st.runs, st.wall_ns / runs / 1e6, st.overhead_ns / runs / 1e3,
          st.wall_ns ? 100.0 * st.overhead_ns / st.wall_ns : 0.0, st.wake_ns / runs / 1e3,
          st.wait_ns / runs / 1e3);
    }
    out += "\n";
  }
  TextTable table({false, false, false});
  for (size_t i = 0; i < runnable.output_names.size(); ++i)
    table.add({runnable.output_names[i], type_to_string(outputs[i].type()), summarize(outputs[i])});
  return out + "outputs\n" + table.render(2);
}

int run_run(std::span<const std::string> raw_args) {
  ArgParser parser("run",
                   "Import an ONNX model, run the optimisation passes, place it on the backends "
                   "and run\nit in process, or run an artifact (written by collage compile, told "
                   "apart by its\ncontent) through the runtime library; print the median wall "
                   "time and a summary of\neach output.");
  RunArgs args;
  declare(parser, args);
  if (std::optional<int> exit = parser.parse(raw_args)) return *exit;
  const bool strategy_given = std::any_of(raw_args.begin(), raw_args.end(), [](const auto& a) {
    return a == "--placement" || std::string_view(a).starts_with("--placement=");
  });

  std::optional<ArtifactRunner> artifact;
  auto runnable = is_artifact_file(args.model.model) ? artifact_runnable(args, artifact)
                                                     : model_runnable(args, strategy_given);
  if (!runnable.ok()) return report_failure("run", runnable.status());
  auto inputs = make_inputs(*runnable, args);
  if (!inputs.ok()) return report_failure("run", inputs.status());
  std::vector<double> times_ms;
  std::vector<Tensor> outputs;
  if (absl::Status s = time_runs(*runnable, args, *inputs, artifact, times_ms, outputs); !s.ok())
    return report_failure("run", s);
  if (!args.profile.empty()) {
    if (absl::Status s = artifact->write_profile(args.profile); !s.ok())
      return report_failure("run", s);
  }
  std::fputs(report(*runnable, args, times_ms, outputs, artifact).c_str(), stdout);
  if (!args.outputs.empty()) {
    NamedTensors named;
    for (size_t i = 0; i < runnable->output_names.size(); ++i) {
      const std::string& name = runnable->output_names[i];
      // A value listed twice as an output is written once.
      if (std::none_of(named.begin(), named.end(), [&](const auto& n) { return n.first == name; }))
        named.emplace_back(name, outputs[i]);
    }
    if (absl::Status s = write_npz(args.outputs, named); !s.ok()) return report_failure("run", s);
    std::printf("wrote %s\n", args.outputs.c_str());
  }
  if (!args.profile.empty()) std::printf("wrote %s\n", args.profile.c_str());
  return kExitOk;
}

}  // namespace

extern const Command kRunCommand;
const Command kRunCommand{"run", "run a model (placed on the backends) or an artifact, and time it",
                          run_run};

}  // namespace collage::cli
