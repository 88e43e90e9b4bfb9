// `collage run`: imports a model, optimises it, runs it with the reference executor and times it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "absl/strings/str_format.h"
#include "cli_common.h"
#include "collage/npz.h"
#include "collage/passes.h"
#include "collage/reference.h"
#include "core/str_cat.h"

namespace collage::cli {
namespace {

struct RunArgs {
  ModelArgs model;
  std::string inputs, outputs;
  int64_t repeat = 1, warmup = 0, seed = 0;
  bool no_passes = false;
};

constexpr std::string_view kRandomInputs =
    "Without --inputs every graph input gets random values: input i (in graph order) is\n"
    "drawn from a std::mt19937_64 seeded with SEED + i; floating-point inputs are uniform\n"
    "in [-1, 1), integer inputs uniform in [0, 10), bool inputs 0 or 1. With --inputs the\n"
    "archive must hold exactly one array per graph input, with the input's name, dtype and\n"
    "shape. Outputs are written under the graph outputs' names.";

std::string names_of(const Graph& g, const std::vector<ValueId>& ids) {
  std::string s;
  for (ValueId id : ids) s += str_cat(s.empty() ? "" : ", ", g.value(id).name);
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
    }
  }
  return t;
}

// One tensor per graph input, in graph order: from the archive, matched by name, or random.
absl::StatusOr<std::vector<Tensor>> make_inputs(const Graph& g, const RunArgs& args) {
  std::vector<Tensor> inputs;
  if (args.inputs.empty()) {
    for (size_t i = 0; i < g.inputs().size(); ++i)
      inputs.push_back(
          random_tensor(g.value(g.inputs()[i]).type, static_cast<uint64_t>(args.seed) + i));
    return inputs;
  }
  auto arrays = read_npz(args.inputs);
  if (!arrays.ok()) return arrays.status();
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    auto it = std::find_if(arrays->begin(), arrays->end(),
                           [&](const auto& a) { return a.first == v.name; });
    if (it == arrays->end())
      return absl::InvalidArgumentError(str_cat(args.inputs, ": no array for graph input '", v.name,
                                                "' (", type_to_string(v.type), ")"));
    if (it->second.type() != v.type)
      return absl::InvalidArgumentError(
          str_cat(args.inputs, ": array '", v.name, "' is ", type_to_string(it->second.type()),
                  ", but graph input '", v.name, "' is ", type_to_string(v.type)));
    inputs.push_back(it->second);
  }
  for (const auto& [name, t] : *arrays) {
    const bool known = std::any_of(g.inputs().begin(), g.inputs().end(),
                                   [&](ValueId id) { return g.value(id).name == name; });
    if (!known)
      return absl::InvalidArgumentError(
          str_cat(args.inputs, ": array '", name,
                  "' matches no graph input (inputs: ", names_of(g, g.inputs()), ")"));
  }
  return inputs;
}

// "min -0.98 max 0.99 mean 0.012" (and the NaN count when there are any).
std::string summarize(const Tensor& t) {
  if (t.numel() == 0) return "empty";
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

int run_run(std::span<const std::string> raw_args) {
  ArgParser parser("run",
                   "Import an ONNX model, run the optimisation passes and execute it with the "
                   "reference\nexecutor; print the median wall time and a summary of each output.");
  RunArgs args;
  args.model.declare(parser);
  parser.option("--inputs", "FILE.npz", "input arrays, one per graph input, by name", &args.inputs);
  parser.option("--outputs", "FILE.npz", "write the outputs here, by graph output name",
                &args.outputs);
  parser.option("--repeat", "N", "timed runs; the median is reported (default 1)", &args.repeat, 1);
  parser.option("--warmup", "N", "untimed runs before the timed ones (default 0)", &args.warmup, 0);
  parser.option("--seed", "SEED", "seed of the random inputs (default 0)", &args.seed, 0);
  parser.flag("--no-passes", "run the graph as imported, without the optimisation passes",
              &args.no_passes);
  parser.epilog(kRandomInputs);
  if (std::optional<int> exit = parser.parse(raw_args)) return *exit;

  Context ctx;
  auto imported = load_model(ctx, args.model);
  if (!imported.ok()) return report_failure("run", imported.status());
  absl::StatusOr<Graph> g = std::move(imported);
  if (!args.no_passes) {
    g = run_passes(ctx, *g);
    if (!g.ok()) return report_failure("run", g.status());
  }
  auto inputs = make_inputs(*g, args);
  if (!inputs.ok()) return report_failure("run", inputs.status());

  std::vector<double> times_ms;
  absl::StatusOr<std::vector<Tensor>> outputs;
  for (int64_t i = 0; i < args.warmup + args.repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto result = run_reference(*g, *inputs);
    const auto stop = std::chrono::steady_clock::now();
    if (!result.ok()) return report_failure("run", result.status());
    if (i >= args.warmup)
      times_ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    outputs = std::move(result);  // the previous run's outputs are freed outside the timing
  }

  std::string out = absl::StrFormat(
      "%s: %d nodes, median %.3f ms over %d run%s (min %.3f, max %.3f), %d warmup\n",
      args.model.model, g->nodes().size(), median(times_ms), times_ms.size(),
      times_ms.size() == 1 ? "" : "s", *std::min_element(times_ms.begin(), times_ms.end()),
      *std::max_element(times_ms.begin(), times_ms.end()), args.warmup);
  TextTable table({false, false, false});
  NamedTensors named;
  for (size_t i = 0; i < g->outputs().size(); ++i) {
    const Value& v = g->value(g->outputs()[i]);
    const Tensor& t = (*outputs)[i];
    table.add({v.name, type_to_string(t.type()), summarize(t)});
    // A value listed twice as an output is written once.
    if (std::none_of(named.begin(), named.end(), [&](const auto& n) { return n.first == v.name; }))
      named.emplace_back(v.name, t);
  }
  out += "outputs\n" + table.render(2);
  std::fputs(out.c_str(), stdout);
  if (!args.outputs.empty()) {
    if (absl::Status s = write_npz(args.outputs, named); !s.ok()) return report_failure("run", s);
    std::printf("wrote %s\n", args.outputs.c_str());
  }
  return kExitOk;
}

}  // namespace

extern const Command kRunCommand;
const Command kRunCommand{"run", "run a model with the reference executor and time it", run_run};

}  // namespace collage::cli
