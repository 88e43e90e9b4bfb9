// TE MatMul (2-D, 1-D operands, batched with broadcasting, rows flattened across a batch that
// shares B), Gemm (alpha, beta, transA/B, broadcast C) against the reference kernels, with fused
// epilogues, under the default schedule and random knob configurations.
#include <catch2/catch.hpp>
#include <random>

#include "collage/ops/nn.h"
#include "common/test_util.h"
#include "core/str_cat.h"
#include "group_util.h"
#include "te_ops/conv_dense_templates.h"
#include "te_ops/dense.h"

namespace collage::testing {
namespace {

void check(const GroupCase& c, int configs, uint64_t seed) {
  for (const codegen::TargetSpec& target : runnable_targets()) {
    INFO("target " << target.to_string());
    BuiltGroup b = build_group(c, 2, target);
    absl::StatusOr<te_ops::ScheduledGroup> def = b.def->schedule(b.group);
    INFO(def.status().ToString());
    REQUIRE(def.ok());
    CHECK(run_and_compare(b, *def) < 1e-5);
    absl::StatusOr<tune::ScheduleTemplate> t = te_ops::anchor_schedule_template(b.group);
    REQUIRE(t.ok());
    std::mt19937_64 rng(seed);
    for (int i = 0; i < configs && !t->space.knobs.empty(); ++i) {
      tune::Knobs k;
      for (const auto& [name, values] : t->space.knobs) k[name] = values[rng() % values.size()];
      INFO("knobs " << tune::to_string(k));
      absl::StatusOr<te_ops::ScheduledGroup> s = t->apply(k);
      INFO(s.status().ToString());
      REQUIRE(s.ok());
      CHECK(run_and_compare(b, *s) < 1e-5);
    }
  }
}

GroupCase matmul(Shape a, Shape b, bool b_const, Chain chain, uint64_t seed) {
  GroupCase c;
  c.op = "MatMul";
  c.inputs = {random_f32(a, seed), random_f32(b, seed + 1)};
  c.constant = {false, b_const};
  c.chain = chain;
  return c;
}

GroupCase gemm(Shape a, Shape b, Shape cshape, float alpha, float beta, bool ta, bool tb,
               Chain chain, uint64_t seed) {
  auto attrs = std::make_shared<GemmAttrs>();
  attrs->alpha = alpha;
  attrs->beta = beta;
  attrs->transA = ta;
  attrs->transB = tb;
  GroupCase c;
  c.op = "Gemm";
  c.attrs = attrs;
  c.inputs = {random_f32(a, seed), random_f32(b, seed + 1)};
  c.constant = {false, true};
  if (!cshape.empty() || beta != 0) {
    c.inputs.push_back(random_f32(cshape, seed + 2));
    c.constant.push_back(true);
  }
  c.chain = chain;
  return c;
}

}  // namespace

TEST_CASE("matmul 2-D with tails, constant and run-time B", "[te_ops][dense]") {
  check(matmul({37, 53}, {53, 45}, true, Chain::none, 1), 6, 1);
  check(matmul({19, 40}, {40, 70}, false, Chain::relu, 2), 4, 2);
  check(matmul({5, 16}, {16, 7}, true, Chain::add_relu, 3), 3, 3);
}

TEST_CASE("matmul with 1-D operands", "[te_ops][dense]") {
  check(matmul({33}, {33, 50}, true, Chain::relu, 4), 0, 4);
  check(matmul({3, 9, 33}, {33}, false, Chain::none, 5), 0, 5);
  check(matmul({17}, {17}, false, Chain::none, 6), 0, 6);
}

TEST_CASE("batched matmul with broadcasting", "[te_ops][dense]") {
  check(matmul({2, 3, 17, 20}, {3, 20, 19}, false, Chain::add_relu, 7), 4, 7);
  check(matmul({2, 13, 24}, {24, 33}, true, Chain::relu, 8), 4, 8);
  check(matmul({1, 9, 16}, {4, 16, 40}, false, Chain::none, 9), 2, 9);
}

TEST_CASE("matmul of [..., R, 1, K] by a B the batch shares: R rows of one product",
          "[te_ops][dense]") {
  // ViT's attention projection as exported ([197, 1, 768] x [768, 2304]) in small: register
  // tiles of several rows along the last batch axis, not one matrix-vector product per row.
  for (const GroupCase& c : {matmul({37, 1, 20}, {20, 45}, true, Chain::add_relu, 16),
                             matmul({2, 13, 1, 24}, {24, 33}, false, Chain::relu, 17)}) {
    check(c, 4, 16);
    BuiltGroup b = build_group(c, 2, codegen::TargetSpec::host());
    absl::StatusOr<tune::ScheduleTemplate> t = te_ops::anchor_schedule_template(b.group);
    REQUIRE(t.ok());
    CHECK(t->defaults.at("mr") > 1);
  }
}

TEST_CASE(
    "matmul of A [batch..., m, K] by a B the batch shares: tiles over the batch's rows as one",
    "[te_ops][dense]") {
  // A ConvNeXt block's MatMul at 14 x 14 ([1, 14, 14, 384] x [384, 1536]) in small: the register
  // tile's mr rows run on across the rows of several batch entries. Tiles per entry would
  // compute 7 rows as 12 with AVX2's 6-row tile.
  for (const GroupCase& c : {matmul({1, 7, 7, 24}, {24, 40}, true, Chain::add_relu, 18),
                             matmul({2, 5, 7, 24}, {24, 33}, false, Chain::relu, 19),
                             matmul({3, 7, 16}, {16, 20}, true, Chain::none, 20)}) {
    check(c, 4, 18);
    for (const codegen::TargetSpec& target : runnable_targets()) {
      BuiltGroup b = build_group(c, 2, target);
      absl::StatusOr<tune::ScheduleTemplate> t = te_ops::anchor_schedule_template(b.group);
      REQUIRE(t.ok());
      absl::StatusOr<te_ops::ScheduledGroup> def = t->apply(t->defaults);
      REQUIRE(def.ok());
      std::vector<te::Tensor> args = b.group.inputs;
      args.insert(args.end(), b.group.outputs.begin(), b.group.outputs.end());
      args.insert(args.end(), def->prepacked.begin(), def->prepacked.end());
      absl::StatusOr<te::PrimFunc> f = te::lower(def->schedule, args, "k");
      INFO(f.status().ToString());
      REQUIRE(f.ok());
      // The accumulator is one register tile, mr rows of one panel.
      const int64_t nr = te_ops::dense::panel_columns(target, c.inputs[1].shape().back());
      const std::string tile = str_cat("f32[", t->defaults.at("mr"), "x", nr, "]");
      INFO(te::to_string(*f));
      CHECK(te::to_string(*f).find(str_cat(".panels: ", tile)) != std::string::npos);
    }
  }
}

TEST_CASE("gemm with alpha, beta, transposes and broadcast C", "[te_ops][dense]") {
  check(gemm({21, 30}, {30, 35}, {35}, 1.f, 1.f, false, false, Chain::relu, 10), 4, 10);
  check(gemm({30, 21}, {35, 30}, {21, 1}, 0.5f, 2.f, true, true, Chain::add_relu, 11), 4, 11);
  check(gemm({8, 12}, {40, 12}, {}, 1.5f, 0.f, false, true, Chain::none, 12), 2, 12);
  check(gemm({6, 10}, {10, 48}, {6, 48}, 1.f, -1.f, false, false, Chain::none, 13), 2, 13);
}

}  // namespace collage::testing

namespace collage::testing {

TEST_CASE(
    "dense default schedule: tiles from the target's registers, panels outermost when "
    "there are enough, k unrolled",
    "[te_ops][dense]") {
  for (const codegen::TargetSpec& target : runnable_targets()) {
    if (target.cpu != "x86-64-v3" && target.cpu != "x86-64-v4") continue;
    INFO("target " << target.to_string());
    // 49 x 256 x 64 (ResNet-50's last stage has 49 rows): 6-row tiles of two AVX2 vectors (54
    // rows computed, not 3-row tiles computing 51), 14-row tiles of two AVX-512 vectors; 16 or 8
    // panels for 2 threads: panels outermost, a row block of one tile.
    BuiltGroup b = build_group(matmul({49, 64}, {64, 256}, true, Chain::relu, 14), 2, target);
    absl::StatusOr<tune::ScheduleTemplate> t = te_ops::anchor_schedule_template(b.group);
    REQUIRE(t.ok());
    const int64_t mr = t->defaults.at("mr");
    CHECK(mr == (target.vector_registers() == 32 ? 14 : 6));
    CHECK(mr * 2 + 3 <= target.vector_registers());
    CHECK(t->defaults.at("mb") == mr);
    CHECK(t->defaults.at("par_j") == 1);
    CHECK(t->defaults.at("ku") == 4);
    absl::StatusOr<te_ops::ScheduledGroup> def = b.def->schedule(b.group);
    REQUIRE(def.ok());
    CHECK(run_and_compare(b, *def) < 1e-5);
    // One panel of 16 columns, 300 rows: row blocks outermost; k = 30 unrolled by 2.
    BuiltGroup tall = build_group(matmul({300, 30}, {30, 16}, true, Chain::none, 15), 2, target);
    absl::StatusOr<tune::ScheduleTemplate> tt = te_ops::anchor_schedule_template(tall.group);
    REQUIRE(tt.ok());
    CHECK(tt->defaults.at("par_j") == 0);
    CHECK(tt->defaults.at("ku") == 2);
    CHECK(tt->defaults.at("mb") >= tt->defaults.at("mr"));
    absl::StatusOr<te_ops::ScheduledGroup> tall_def = tall.def->schedule(tall.group);
    REQUIRE(tall_def.ok());
    CHECK(run_and_compare(tall, *tall_def) < 1e-5);
  }
}

}  // namespace collage::testing
