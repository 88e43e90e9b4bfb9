// Runs one of ONNX's backend node tests (model.onnx + test_data_set_0) in process and judges it:
// pass, wrong (ran, answer differs), refused (an error status that names what is unsupported)
// or crash (an exception, or an Internal error: a broken invariant rather than a refusal).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "collage/backend.h"
#include "collage/context.h"

namespace collage::testing {

enum class Verdict { pass, wrong, refused, crash };
const char* verdict_name(Verdict v);

struct NodeTestResult {
  std::string name;
  Verdict verdict = Verdict::refused;
  std::string note;  // why it is not a pass: the error, or which output differs and how
};

// How the graph is run: the reference executor, or placed (greedy over `backends`, what single
// backends leave to the native fallback), built and run by the in-process executor.
struct NodeTestMode {
  std::string name;                      // "reference" or "placed"
  const BackendRegistry* backends = nullptr;  // null: the reference executor
};

// Compares at rtol 1e-3 / atol 1e-5 for floats (NaN matches NaN), exactly for the other types;
// empty when they agree, else why not.
std::string compare_outputs(const Tensor& actual, const Tensor& expected);

NodeTestResult run_node_test(const Context& ctx, const std::filesystem::path& dir,
                             const NodeTestMode& mode);

// ONNX Runtime's verdicts written by make_node_tests.py (ort.tsv): test name -> verdict.
std::map<std::string, std::string> read_ort_verdicts(const std::filesystem::path& file);

}  // namespace collage::testing
