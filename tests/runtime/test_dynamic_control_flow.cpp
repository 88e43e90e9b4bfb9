// If, Loop and Scan on the dynamic runtime module: their bodies compiled into nested plans of the
// module's kernels (runtime/modules/dynamic/dyn_body.h), run in process and from an artifact
// loaded through the C API, against the reference executor: run-time trip counts and
// conditions, loop-carried values whose shape grows, scan outputs, outer values the bodies read,
// branches of different sizes; and the errors: a body that fails, a loop that never ends, a
// damaged nested plan (named damage, and 300 random ones that must load with an error or run).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "collage/backends/dynamic.h"
#include "collage/executor.h"
#include "collage/ops.h"
#include "collage/ops/control_flow.h"
#include "collage/ops/elementwise.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "runtime/runtime_test_util.h"

namespace collage::testing {
namespace {

std::shared_ptr<const Graph> finish(GraphBuilder& b) {
  auto g = b.finish();
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return std::make_shared<const Graph>(std::move(*g));
}

Tensor bool_scalar(bool v) {
  Tensor t(DType::boolean, {});
  t.data<uint8_t>()[0] = v;
  return t;
}

// Loop(M, cond, x f32[3], acc f32[1]; w f32[3] read by the body): each iteration y = x + w,
// acc = Concat(acc, y) (a carried value whose size grows), cond = i < limit (a body constant),
// y stacked as a scan output. Outputs: x, acc, the stacked ys.
Graph loop_graph(const Context& ctx, int64_t limit) {
  GraphBuilder body(ctx, "body");
  const ValueId i = body.add_input("i", {DType::i64, {}});
  body.add_input("cond_in", {DType::boolean, {}});
  const ValueId x = body.add_input("x_in", {DType::f32, {3}});
  const ValueId acc = body.add_input("acc_in", {DType::f32, {kDynamicDim}});
  const ValueId w = body.add_input("w", {DType::f32, {3}});
  const ValueId lim = body.add_constant("limit", Tensor::scalar_i64(limit));
  const ValueId y = *body.add("Add", {x, w});
  const ValueId grown = *body.add("Concat", {acc, y});
  const ValueId go = *body.add("Less", {i, lim});
  body.add_output(go);
  body.add_output(y);
  body.add_output(grown);
  body.add_output(y);
  auto a = std::make_shared<LoopAttrs>();
  a->body = finish(body);
  a->num_captured = 1;

  GraphBuilder b(ctx, "loop");
  const ValueId m = b.add_input("M", {DType::i64, {}});
  const ValueId c = b.add_input("cond", {DType::boolean, {}});
  const ValueId x0 = b.add_input("x", {DType::f32, {3}});
  const ValueId acc0 = b.add_input("acc", {DType::f32, {1}});
  const ValueId w0 = b.add_input("w", {DType::f32, {3}});
  auto outs = b.add_node("Loop", {m, c, x0, acc0, w0}, a, "loop", 3);
  INFO(outs.status().ToString());
  REQUIRE(outs.ok());
  for (ValueId v : *outs) b.add_output(v);
  return *finish(b);
}

// If(c) { Concat(x, w) } else { Mul(x, w) }: outputs of 6 and 3 elements, f32[?].
Graph if_graph(const Context& ctx) {
  GraphBuilder then_b(ctx, "then");
  ValueId x = then_b.add_input("x", {DType::f32, {3}});
  ValueId w = then_b.add_input("w", {DType::f32, {3}});
  then_b.add_output(*then_b.add("Concat", {x, w}));
  GraphBuilder else_b(ctx, "else");
  x = else_b.add_input("x", {DType::f32, {3}});
  w = else_b.add_input("w", {DType::f32, {3}});
  else_b.add_output(*else_b.add("Mul", {x, w}));
  auto a = std::make_shared<IfAttrs>();
  a->then_branch = finish(then_b);
  a->else_branch = finish(else_b);
  GraphBuilder b(ctx, "if");
  const ValueId c = b.add_input("c", {DType::boolean, {}});
  const ValueId x0 = b.add_input("x", {DType::f32, {3}});
  const ValueId w0 = b.add_input("w", {DType::f32, {3}});
  auto y = b.add("If", {c, x0, w0}, a);
  INFO(y.status().ToString());
  REQUIRE(y.ok());
  b.add_output(*y);
  return *finish(b);
}

// Scan over xs f32[4x2] (reversed when `reverse`) with state s f32[2]: s = s + x, the running
// sums stacked on output axis 1.
Graph scan_graph(const Context& ctx, bool reverse) {
  GraphBuilder body(ctx, "body");
  const ValueId s = body.add_input("s", {DType::f32, {2}});
  const ValueId x = body.add_input("x", {DType::f32, {2}});
  const ValueId sum = *body.add("Add", {s, x});
  body.add_output(sum);
  body.add_output(sum);
  auto a = std::make_shared<ScanAttrs>();
  a->body = finish(body);
  a->num_scan_inputs = 1;
  a->scan_input_directions = {reverse ? 1 : 0};
  a->scan_output_axes = {1};
  GraphBuilder b(ctx, "scan");
  const ValueId s0 = b.add_input("s", {DType::f32, {2}});
  const ValueId xs = b.add_input("xs", {DType::f32, {4, 2}});
  auto outs = b.add_node("Scan", {s0, xs}, a, "scan", 2);
  INFO(outs.status().ToString());
  REQUIRE(outs.ok());
  for (ValueId v : *outs) b.add_output(v);
  return *finish(b);
}

BackendRegistry dynamic_backends() {
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_dynamic_backend(backends).ok());
  return backends;
}

// The one control-flow node on `dynamic`.
Placement on_dynamic(const Graph& g) {
  Placement p;
  p.strategy = "test";
  REQUIRE(g.nodes().size() == 1);
  PlacedGroup& group = p.groups.emplace_back();
  group.nodes = NodeSet::of(1, {0});
  group.backend = "dynamic";
  return p;
}

void check_same(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    INFO("output " << o);
    CHECK(got[o].shape() == want[o].shape());
    if (got[o].shape() == want[o].shape() && got[o].numel() > 0)
      CHECK(max_relative_error(got[o], want[o]) < 1e-6);
  }
}

// `g` compiled on the dynamic module, run in process and from its artifact on each of
// `cases`, against the reference executor.
void check_both_ways(const Graph& g, const std::vector<std::vector<Tensor>>& cases) {
  Context ctx;
  BackendRegistry backends = dynamic_backends();
  auto model = compile_placement(ctx, backends, g, on_dynamic(g));
  INFO(model.status().ToString());
  REQUIRE(model.ok());
  auto bytes = compile_artifact(ctx, backends, g, on_dynamic(g), {}, nullptr);
  INFO(bytes.status().ToString());
  REQUIRE(bytes.ok());
  std::string message;
  auto m = load_bytes(*bytes, nullptr, nullptr, &message);
  INFO(message);
  REQUIRE(m);
  for (size_t k = 0; k < cases.size(); ++k) {
    INFO("case " << k);
    auto want = run_reference(g, cases[k]);
    INFO(want.status().ToString());
    REQUIRE(want.ok());
    auto got = model->run(cases[k]);
    INFO(got.status().ToString());
    REQUIRE(got.ok());
    check_same(*got, *want);
    const std::vector<Tensor> loaded = run_outputs(m.get(), cases[k], &message);
    INFO(message);
    REQUIRE(message.empty());
    check_same(loaded, *want);
  }
}

TEST_CASE("the dynamic module runs Loop: trip counts, conditions, growing carried values",
          "[runtime][control-flow]") {
  Context ctx;
  const Graph g = loop_graph(ctx, 3);
  const Tensor x = random_f32({3}, 1), acc = random_f32({1}, 2), w = random_f32({3}, 3);
  check_both_ways(g, {
                         // the body's condition ends it: i = 0..3, four iterations
                         {Tensor::scalar_i64(10), bool_scalar(true), x, acc, w},
                         // the trip count ends it first
                         {Tensor::scalar_i64(2), bool_scalar(true), x, acc, w},
                         // no iteration: the scan output has no rows
                         {Tensor::scalar_i64(5), bool_scalar(false), x, acc, w},
                     });
  auto want = run_reference(g, {Tensor::scalar_i64(10), bool_scalar(true), x, acc, w});
  REQUIRE(want.ok());
  CHECK((*want)[1].shape() == Shape{13});
  CHECK((*want)[2].shape() == Shape{4, 3});
}

TEST_CASE("the dynamic module runs If with branches of different sizes",
          "[runtime][control-flow]") {
  Context ctx;
  const Graph g = if_graph(ctx);
  const Tensor x = random_f32({3}, 4), w = random_f32({3}, 5);
  check_both_ways(g, {{bool_scalar(true), x, w}, {bool_scalar(false), x, w}});
}

TEST_CASE("the dynamic module runs Scan forward and reversed", "[runtime][control-flow]") {
  Context ctx;
  for (bool reverse : {false, true}) {
    INFO("reverse " << reverse);
    check_both_ways(scan_graph(ctx, reverse), {{random_f32({2}, 6), random_f32({4, 2}, 7)}});
  }
}

TEST_CASE("a control-flow kernel reports the iteration and node of a failing body",
          "[runtime][control-flow]") {
  Context ctx;
  BackendRegistry backends = dynamic_backends();
  // Gather(table f32[3x2], i): iteration 3 reads past the table's rows.
  GraphBuilder body(ctx, "body");
  const ValueId i = body.add_input("i", {DType::i64, {}});
  const ValueId c = body.add_input("c", {DType::boolean, {}});
  const ValueId table = body.add_constant("table", random_f32({3, 2}, 8));
  body.add_output(*body.add("Identity", {c}));
  body.add_output(*body.add("Gather", {table, i}));
  auto a = std::make_shared<LoopAttrs>();
  a->body = finish(body);
  GraphBuilder b(ctx, "gathers");
  const ValueId m = b.add_input("M", {DType::i64, {}});
  const ValueId cond = b.add_input("cond", {DType::boolean, {}});
  auto rows = b.add_node("Loop", {m, cond}, a, "rows", 1);
  REQUIRE(rows.ok());
  b.add_output(rows->front());
  const Graph g = *finish(b);
  auto model = compile_placement(ctx, backends, g, on_dynamic(g));
  INFO(model.status().ToString());
  REQUIRE(model.ok());
  auto fine = model->run({Tensor::scalar_i64(3), bool_scalar(true)});
  INFO(fine.status().ToString());
  REQUIRE(fine.ok());
  CHECK((*fine)[0].shape() == Shape{3, 2});
  auto bad = model->run({Tensor::scalar_i64(5), bool_scalar(true)});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("iteration 3") && Catch::Contains("Gather"));
}

TEST_CASE("a Loop whose condition never turns false is stopped", "[runtime][control-flow]") {
  Context ctx;
  BackendRegistry backends = dynamic_backends();
  GraphBuilder body(ctx, "body");
  body.add_input("i", {DType::i64, {}});
  const ValueId c = body.add_input("c", {DType::boolean, {}});
  const ValueId x = body.add_input("x", {DType::f32, {2}});
  body.add_output(*body.add("Identity", {c}));
  body.add_output(*body.add("Neg", {x}));
  auto a = std::make_shared<LoopAttrs>();
  a->body = finish(body);
  GraphBuilder b(ctx, "endless");
  const ValueId cond = b.add_input("cond", {DType::boolean, {}});
  const ValueId x0 = b.add_input("x", {DType::f32, {2}});
  auto out = b.add_node("Loop", {kNoValue, cond, x0}, a, "endless", 1);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  b.add_output(out->front());
  const Graph g = *finish(b);
  auto bytes = compile_artifact(ctx, backends, g, on_dynamic(g), {}, nullptr);
  INFO(bytes.status().ToString());
  REQUIRE(bytes.ok());
  auto m = load_bytes(*bytes, nullptr, nullptr, nullptr);
  REQUIRE(m);
  std::string message;
  run_outputs(m.get(), {bool_scalar(true), random_f32({2}, 9)}, &message);
  CHECK_THAT(message, Catch::Contains("1000000 iterations without reaching its end"));
  auto want = run_reference(g, {bool_scalar(false), random_f32({2}, 9)});
  REQUIRE(want.ok());
  const std::vector<Tensor> got = run_outputs(m.get(), {bool_scalar(false), random_f32({2}, 9)},
                                               &message);
  REQUIRE(message.empty());
  check_same(got, *want);
}

TEST_CASE("a damaged nested plan is refused when the artifact loads", "[runtime][control-flow]") {
  Context ctx;
  BackendRegistry backends = dynamic_backends();
  const Graph g = loop_graph(ctx, 3);
  auto bytes = compile_artifact(ctx, backends, g, on_dynamic(g), {}, nullptr);
  REQUIRE(bytes.ok());
  const size_t at = bytes->find("DYNB");
  REQUIRE(at != std::string::npos);
  struct Damage {
    size_t offset;  // from the body's magic
    char value;
    const char* says;
  };
  // The body's version; its value count (now beyond the bytes); its first value's element type.
  for (const Damage& d : {Damage{4, 9, "a body of version 9"},
                          Damage{11, 0x7f, "truncated body: values"},
                          Damage{12, 99, "element type 99"}}) {
    INFO(d.says);
    std::string file = *bytes;
    file[at + d.offset] = d.value;
    rechecksum(file);
    int32_t code = 0;
    std::string message;
    auto m = load_bytes(file, nullptr, &code, &message);
    CHECK_FALSE(m);
    CHECK_THAT(message, Catch::Contains("body 0") && Catch::Contains(d.says));
  }
}

TEST_CASE("mutated nested plans load with an error or run and never crash",
          "[runtime][control-flow]") {
  Context ctx;
  BackendRegistry backends = dynamic_backends();
  const Graph loop = loop_graph(ctx, 3), branch = if_graph(ctx), scan = scan_graph(ctx, false);
  const Tensor x = random_f32({3}, 1), acc = random_f32({1}, 2), w = random_f32({3}, 3);
  const std::pair<const Graph*, std::vector<Tensor>> cases[] = {
      {&loop, {Tensor::scalar_i64(10), bool_scalar(true), x, acc, w}},
      {&branch, {bool_scalar(true), x, w}},
      {&scan, {random_f32({2}, 6), random_f32({4, 2}, 7)}}};
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  int loaded = 0, refused = 0;
  for (const auto& [g, inputs] : cases) {
    auto bytes = compile_artifact(ctx, backends, *g, on_dynamic(*g), {}, nullptr);
    REQUIRE(bytes.ok());
    const size_t at = bytes->find("DYNB");
    REQUIRE(at != std::string::npos);
    const size_t span = std::min<size_t>(400, bytes->size() - at);
    for (int round = 0; round < 100; ++round) {
      std::string file = *bytes;
      for (uint64_t k = 0, n = 1 + next() % 3; k < n; ++k)
        file[at + next() % span] = static_cast<char>(next());
      rechecksum(file);
      std::string message;
      auto m = load_bytes(file, nullptr, nullptr, &message);
      if (!m) {
        ++refused;
        CHECK_FALSE(message.empty());
        continue;
      }
      ++loaded;
      run_outputs(m.get(), inputs, &message);
    }
  }
  CHECK(refused > 0);
  CHECK(loaded + refused == 300);
}

// Seeds of the artifact fuzzer (fuzz/run_fuzzer.sh): a Loop, an If and a Scan with nested plans,
// in COLLAGE_BINARY_DIR/test-data/control-flow-seeds.
TEST_CASE("control-flow artifacts for the fuzzer's corpus", "[.control-flow-seeds]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(COLLAGE_BINARY_DIR) / "test-data" / "control-flow-seeds";
  fs::create_directories(dir);
  Context ctx;
  BackendRegistry backends = dynamic_backends();
  const std::pair<const char*, Graph> graphs[] = {
      {"loop", loop_graph(ctx, 3)}, {"if", if_graph(ctx)}, {"scan", scan_graph(ctx, true)}};
  for (const auto& [name, g] : graphs) {
    auto bytes = compile_artifact(ctx, backends, g, on_dynamic(g), {}, nullptr);
    INFO(bytes.status().ToString());
    REQUIRE(bytes.ok());
    write_file((dir / (std::string(name) + ".collage")).string(), *bytes);
  }
}

}  // namespace
}  // namespace collage::testing
