// TE convolutions (direct and blocked NCHWc, 1-D and 2-D, pads, strides, dilations, groups in
// the direct and the blocked schedules, blocked depthwise) against the reference kernel, with fused epilogues, under the default schedule and
// random knob configurations (which leave tails in every split).
#include <catch2/catch.hpp>
#include <random>

#include "collage/context.h"
#include "collage/ops/nn.h"
#include "common/test_util.h"
#include "group_util.h"
#include "te_ops/conv_dense_common.h"
#include "te_ops/conv_dense_templates.h"

namespace collage::testing {
namespace {

struct ConvCase {
  Shape x, w;
  std::vector<int64_t> strides, dilations, pads;
  int64_t group = 1;
  bool bias = true;
  bool weight_constant = true;
  Chain chain = Chain::none;
  std::string auto_pad = "NOTSET";
};

GroupCase make_case(const ConvCase& c, uint64_t seed) {
  auto attrs = std::make_shared<ConvAttrs>();
  attrs->strides = c.strides;
  attrs->dilations = c.dilations;
  attrs->pads = c.pads;
  attrs->group = c.group;
  attrs->auto_pad = c.auto_pad;
  GroupCase g;
  g.op = "Conv";
  g.attrs = attrs;
  g.inputs = {random_f32(c.x, seed), random_f32(c.w, seed + 1),
              c.bias ? random_f32({c.w[0]}, seed + 2) : Tensor()};
  g.constant = {false, c.weight_constant, true};
  g.chain = c.chain;
  return g;
}

// Runs the default schedule and `configs` random knob configurations of the case.
void check_case(const ConvCase& c, int configs, uint64_t seed) {
  for (const codegen::TargetSpec& target : runnable_targets()) {
    INFO("target " << target.to_string());
    BuiltGroup b = build_group(make_case(c, seed), 2, target);
    absl::StatusOr<te_ops::ScheduledGroup> def = b.def->schedule(b.group);
    INFO(def.status().ToString());
    REQUIRE(def.ok());
    CHECK(run_and_compare(b, *def) < 1e-5);
    absl::StatusOr<tune::ScheduleTemplate> t = te_ops::anchor_schedule_template(b.group);
    REQUIRE(t.ok());
    std::mt19937_64 rng(seed);
    for (int i = 0; i < configs; ++i) {
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

}  // namespace

TEST_CASE("blocked conv2d 3x3, pads 1, tails in every split", "[te_ops][conv]") {
  // 20 output channels: a partial block of 16; 12 input channels: one partial input block.
  check_case({{1, 12, 9, 11}, {20, 12, 3, 3}, {}, {}, {1, 1, 1, 1}}, 6, 1);
}

TEST_CASE("blocked conv2d with stride, dilation, asymmetric pads and residual epilogue",
          "[te_ops][conv]") {
  check_case({{2, 19, 13, 10}, {33, 19, 3, 3}, {2, 2}, {2, 1}, {2, 1, 1, 0}, 1, true, true,
              Chain::add_relu},
             5, 2);
}

TEST_CASE("blocked conv2d 1x1 and 7x7 stride 2 (first layer) with relu", "[te_ops][conv]") {
  check_case({{1, 32, 7, 7}, {48, 32, 1, 1}, {}, {}, {}, 1, false, true, Chain::relu}, 4, 3);
  check_case({{1, 3, 17, 15}, {16, 3, 7, 7}, {2, 2}, {}, {3, 3, 3, 3}, 1, true, true,
              Chain::relu},
             3, 4);
}

TEST_CASE("blocked conv2d with a weight computed at run time", "[te_ops][conv]") {
  check_case({{1, 16, 6, 6}, {16, 16, 3, 3}, {}, {}, {1, 1, 1, 1}, 1, true, false, Chain::relu}, 2,
             5);
}

TEST_CASE("depthwise conv2d (blocked depthwise schedule) and grouped conv2d (direct schedule)",
          "[te_ops][conv]") {
  // 8 channels: one partial block of 16.
  check_case({{1, 8, 9, 19}, {8, 1, 3, 3}, {}, {}, {1, 1, 1, 1}, 8, true, true, Chain::relu}, 4, 6);
  // Groups of 4 inputs and 3 outputs: no blocked form, the direct schedule.
  check_case({{2, 8, 10, 7}, {6, 4, 3, 3}, {2, 1}, {}, {1, 0, 1, 2}, 2, false, true,
              Chain::add_relu},
             3, 7);
  check_case({{1, 16, 11, 33}, {16, 1, 5, 5}, {1, 1}, {2, 2}, {}, 16, true, false, Chain::none},
             2, 8);
  // Stride 2 with a tail block (24 channels), as MobileNetV2's downsampling depthwise layers.
  check_case({{1, 24, 13, 12}, {24, 1, 3, 3}, {2, 2}, {}, {1, 1, 1, 1}, 24, true, true,
              Chain::relu},
             4, 12);
}

TEST_CASE("grouped conv2d in the blocked schedule: block-diagonal and whole-block groups",
          "[te_ops][conv]") {
  // 8 groups of 4 channels: block-diagonal 16 x 16 weights (ResNeXt's narrow stages).
  check_case({{1, 32, 9, 10}, {32, 4, 3, 3}, {}, {}, {1, 1, 1, 1}, 8, true, true,
              Chain::add_relu},
             4, 13);
  // 3 groups of 8 channels: one whole block and a partial one.
  check_case({{1, 24, 8, 9}, {24, 8, 3, 3}, {2, 2}, {}, {1, 1, 1, 1}, 3, true, true, Chain::relu},
             3, 16);
  // 2 groups of 32 channels: each output block reduces over its group's two input blocks.
  check_case({{1, 64, 7, 9}, {64, 32, 3, 3}, {2, 2}, {}, {1, 1, 1, 1}, 2, true, true,
              Chain::relu},
             3, 14);
  // 4 groups of 16, weight computed at run time.
  check_case({{1, 64, 6, 6}, {64, 16, 1, 1}, {}, {}, {}, 4, false, false, Chain::none}, 2, 15);
}

TEST_CASE("conv1d blocked and depthwise, SAME_UPPER", "[te_ops][conv]") {
  check_case({{2, 16, 23}, {24, 16, 5}, {2}, {}, {}, 1, true, true, Chain::relu, "SAME_UPPER"}, 4,
             9);
  check_case({{1, 6, 40}, {6, 1, 3}, {}, {3}, {3, 3}, 6, true, true, Chain::add_relu}, 3, 10);
  check_case({{1, 5, 19}, {4, 5, 3}, {}, {}, {1, 1}, 1, false, true, Chain::none}, 2, 11);
}

TEST_CASE("conv refuses 3-D and non-f32 inputs with a message naming the node",
          "[te_ops][conv]") {
  const std::shared_ptr<const te_ops::TeOpRegistry> registry = conv_dense_registry();
  const te_ops::TeOpDef* def = registry->find("Conv");
  REQUIRE(def);
  // A 3-D conv built by the reference graph, refused by the TE compute.
  ConvCase c{{1, 2, 3, 4, 5}, {2, 2, 1, 1, 1}, {}, {}, {}, 1, false};
  GroupCase gc = make_case(c, 3);
  static const Context ctx;
  GraphBuilder b(ctx, "g3");
  ValueId x = b.add_input("x", gc.inputs[0].type());
  ValueId w = b.add_constant("w", gc.inputs[1]);
  absl::StatusOr<ValueId> y = b.add("Conv", {x, w}, gc.attrs, "conv3d");
  REQUIRE(y.ok());
  b.add_output(*y);
  absl::StatusOr<Graph> g = b.finish();
  REQUIRE(g.ok());
  std::vector<te::Tensor> in = {te::placeholder(gc.inputs[0].shape(), DType::f32, "x"),
                                te::placeholder(gc.inputs[1].shape(), DType::f32, "w")};
  absl::StatusOr<std::vector<te::Tensor>> out = def->compute(*g, g->node(0), in);
  REQUIRE(out.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(out.status().message()), Catch::Contains("conv3d"));
  CHECK_THAT(std::string(out.status().message()), Catch::Contains("2-D"));
}

TEST_CASE("depthwise default tile: its accumulators fit the target's registers",
          "[te_ops][conv]") {
  // 56 output columns (MobileNetV2's 56x56 depthwise layers): 14 columns of one AVX-512 vector;
  // at most 6 columns of two AVX2 vectors, 4 being the largest that divides 56.
  for (const codegen::TargetSpec& target : runnable_targets()) {
    if (target.cpu != "x86-64-v3" && target.cpu != "x86-64-v4") continue;
    INFO("target " << target.to_string());
    BuiltGroup b = build_group(
        make_case({{1, 32, 56, 56}, {32, 1, 3, 3}, {}, {}, {1, 1, 1, 1}, 32, true, true,
                   Chain::relu},
                  17),
        2, target);
    absl::StatusOr<tune::ScheduleTemplate> t = te_ops::anchor_schedule_template(b.group);
    REQUIRE(t.ok());
    CHECK(t->defaults.at("ow_t") == (target.vector_registers() == 32 ? 14 : 4));
    absl::StatusOr<te_ops::ScheduledGroup> def = b.def->schedule(b.group);
    REQUIRE(def.ok());
    CHECK(run_and_compare(b, *def) < 1e-5);
  }
}

TEST_CASE("blocked conv 1x1 with strides: the data pack gathers the positions the windows read",
          "[te_ops][conv]") {
  // ResNet's downsample (stride 2 on an odd size, 13 -> 7) with a residual epilogue; strides
  // (3, 2) with pads and partial blocks; 1-D.
  check_case({{1, 24, 13, 13}, {40, 24, 1, 1}, {2, 2}, {}, {}, 1, true, true, Chain::add_relu}, 4,
             21);
  check_case({{2, 20, 11, 9}, {18, 20, 1, 1}, {3, 2}, {}, {1, 0, 1, 1}, 1, false, true,
              Chain::relu},
             3, 22);
  check_case({{1, 16, 17}, {24, 16, 1}, {2}, {}, {}, 1, true, true, Chain::none}, 2, 23);
}

}  // namespace collage::testing
