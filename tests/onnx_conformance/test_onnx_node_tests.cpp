// ONNX's backend node tests (tests/onnx_conformance/make_node_tests.py writes them with ONNX
// Runtime's verdicts) run in process under the reference executor and under a placement over the
// built-in backends. Prints pass / wrong / refused / crash; fails on any wrong answer or crash,
// or when the passes fall below the floor below (raise it as operators are added).
#include <algorithm>
#include <fstream>
#include <map>
#include <regex>

#include <catch2/catch.hpp>

#include "collage/backends/dnnl.h"
#include "collage/backends/dynamic.h"
#include "collage/backends/eigen.h"
#include "collage/backends/native.h"
#include "collage/backends/strings.h"
#include "collage/backends/trees.h"
#include "collage/executor.h"
#include "common/test_util.h"
#include "onnx_conformance/node_test_runner.h"

namespace collage::testing {
namespace {

// Passes that must not be lost, per mode.
constexpr int kReferenceFloor = 1546;
constexpr int kPlacedFloor = 1530;

std::filesystem::path node_test_dir() { return test_data_dir() / "onnx_node"; }

// The refusal's cause, for the summary: the unsupported operator, else the message with numbers
// and quoted names generalised.
std::string cause_of(const std::string& note) {
  static const std::regex op(R"(unsupported operator '([^']*)')");
  std::smatch m;
  if (std::regex_search(note, m, op)) return "unsupported operator " + m[1].str();
  std::string s = std::regex_replace(note, std::regex(R"('[^']*')"), "'_'");
  s = std::regex_replace(s, std::regex(R"([0-9]+)"), "N");
  return s.substr(0, 110);
}

void run_suite(const NodeTestMode& mode, int floor) {
  const auto dir = node_test_dir();
  if (!std::filesystem::exists(dir / "ort.tsv"))
    FAIL("no node tests in " << dir.string()
                             << ": run scripts/test, which makes them (or .venv/bin/python "
                                "tests/onnx_conformance/make_node_tests.py "
                             << dir.string() << ")");
  const auto ort = read_ort_verdicts(dir / "ort.tsv");
  Context ctx;
  std::map<Verdict, int> counts;
  std::map<std::string, int> causes;
  std::ofstream results(dir / ("collage-" + mode.name + ".tsv"));
  std::ofstream gaps(dir / ("gaps-" + mode.name + ".tsv"));
  std::vector<std::string> bad;
  int ort_pass = 0, gap = 0;
  for (const auto& [name, ort_verdict] : ort) {
    const NodeTestResult r = run_node_test(ctx, dir / name, mode);
    ++counts[r.verdict];
    results << name << '\t' << verdict_name(r.verdict) << '\t' << r.note << '\n';
    if (ort_verdict == "pass") ++ort_pass;
    if (r.verdict == Verdict::refused) ++causes[cause_of(r.note)];
    if (r.verdict == Verdict::wrong || r.verdict == Verdict::crash)
      bad.push_back(name + ": " + verdict_name(r.verdict) + ": " + r.note);
    if (ort_verdict == "pass" && r.verdict != Verdict::pass) {
      ++gap;
      gaps << name << '\t' << verdict_name(r.verdict) << '\t' << r.note << '\n';
    }
  }
  std::vector<std::pair<int, std::string>> top;
  for (const auto& [cause, n] : causes) top.emplace_back(-n, cause);
  std::sort(top.begin(), top.end());
  std::string summary = "refusals by cause:\n";
  for (size_t i = 0; i < top.size() && i < 25; ++i)
    summary += "  " + std::to_string(-top[i].first) + "  " + top[i].second + "\n";
  WARN(summary);
  WARN("ONNX node tests, " << mode.name << ": " << counts[Verdict::pass] << " pass, "
                           << counts[Verdict::wrong] << " wrong, " << counts[Verdict::refused]
                           << " refused, " << counts[Verdict::crash] << " crash (of "
                           << ort.size() << "; ONNX Runtime passes " << ort_pass << ", "
                           << gap << " of them not passed here: " << (dir / ("gaps-" + mode.name + ".tsv")).string()
                           << ")");
  for (const std::string& b : bad) UNSCOPED_INFO(b);
  CHECK(bad.empty());
  CHECK(counts[Verdict::pass] >= floor);
}

TEST_CASE("ONNX node tests under the reference executor", "[conformance]") {
  run_suite({"reference", nullptr}, kReferenceFloor);
}

TEST_CASE("ONNX node tests placed on the built-in backends", "[conformance]") {
  BackendRegistry backends;
  REQUIRE(register_dnnl_backend(backends).ok());
  REQUIRE(register_eigen_backend(backends).ok());
  REQUIRE(register_trees_backend(backends).ok());
  REQUIRE(register_native_backend(backends).ok());
  // Nodes whose shapes are known only at run time (data-dependent, or attributes computed by
  // the model) run on the dynamic runtime module's kernels, as in an artifact.
  REQUIRE(register_dynamic_backend(backends).ok());
  // String operators and LabelEncoder run on the strings runtime module's kernels.
  REQUIRE(register_strings_backend(backends).ok());
  REQUIRE(backends.add(make_reference_backend()).ok());
  run_suite({"placed", &backends}, kPlacedFloor);
}

}  // namespace
}  // namespace collage::testing
