// Replays the single-operator cases that tests/ops/make_op_cases.py wrote with ONNX Runtime's
// outputs: each <name>.onnx is imported, run by the reference executor on <name>.inputs.npz, and
// compared with <name>.outputs.npz within the relative tolerance in <name>.rtol.
#include <algorithm>
#include <fstream>
#include <map>

#include <catch2/catch.hpp>

#include "collage/npz.h"
#include "collage/onnx.h"
#include "collage/reference.h"
#include "common/test_util.h"

namespace collage::testing {
namespace {

std::vector<std::string> case_names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".onnx") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

double read_rtol(const std::filesystem::path& path) {
  std::ifstream in(path);
  double rtol = -1;
  in >> rtol;
  return rtol;
}

void replay_case(const Context& ctx, const std::filesystem::path& dir, const std::string& name) {
  auto g = import_onnx_file(ctx, dir / (name + ".onnx"));
  INFO("import: " << g.status().ToString());
  REQUIRE(g.ok());

  auto arrays = read_npz(dir / (name + ".inputs.npz"));
  INFO("inputs: " << arrays.status().ToString());
  REQUIRE(arrays.ok());
  std::map<std::string, Tensor> by_name(arrays->begin(), arrays->end());
  std::vector<Tensor> inputs;
  for (ValueId in : g->inputs()) {
    const std::string& input_name = g->value(in).name;
    auto it = by_name.find(input_name);
    INFO("graph input '" << input_name << "'");
    REQUIRE(it != by_name.end());
    inputs.push_back(it->second);
  }

  auto outs = run_reference(*g, inputs);
  INFO("run: " << outs.status().ToString());
  REQUIRE(outs.ok());

  auto expected = read_npz(dir / (name + ".outputs.npz"));
  INFO("expected outputs: " << expected.status().ToString());
  REQUIRE(expected.ok());
  std::map<std::string, Tensor> want(expected->begin(), expected->end());
  const double rtol = read_rtol(dir / (name + ".rtol"));
  REQUIRE(rtol >= 0);
  for (size_t i = 0; i < g->outputs().size(); ++i) {
    const std::string& out_name = g->value(g->outputs()[i]).name;
    auto it = want.find(out_name);
    INFO("output '" << out_name << "'");
    REQUIRE(it != want.end());
    const Tensor& actual = (*outs)[i];
    INFO(describe_mismatch(actual, it->second) << " (rtol " << rtol << ")");
    CHECK(max_relative_error(actual, it->second) <= rtol);
  }
}

TEST_CASE("operators match ONNX Runtime", "[ops][ort]") {
  const std::filesystem::path dir = test_data_dir() / "op_cases";
  if (!std::filesystem::is_directory(dir))
    FAIL("no operator cases in " << dir.string()
                                 << ": run scripts/test, which generates them (or "
                                    ".venv/bin/python tests/ops/make_op_cases.py "
                                 << dir.string() << ")");
  const std::vector<std::string> names = case_names(dir);
  INFO("operator cases in " << dir.string());
  REQUIRE_FALSE(names.empty());
  Context ctx;
  for (const std::string& name : names) {
    DYNAMIC_SECTION(name) { replay_case(ctx, dir, name); }
  }
}

}  // namespace
}  // namespace collage::testing
