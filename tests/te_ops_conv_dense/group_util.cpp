// Test harness for anchor groups: graph + reference, TE group, compile and compare.
#include "group_util.h"

#include <catch2/catch.hpp>

#include "collage/context.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "tune/group_kernel.h"

namespace collage::testing {
namespace {

const Context& ctx() {
  static const Context c;
  return c;
}

}  // namespace

std::shared_ptr<const te_ops::TeOpRegistry> conv_dense_registry(const codegen::TargetSpec& target) {
  auto reg = std::make_shared<te_ops::TeOpRegistry>();
  te_ops::register_conv_ops(*reg);
  te_ops::register_dense_ops(*reg, target);
  return reg;
}

std::vector<codegen::TargetSpec> runnable_targets() {
  const codegen::TargetSpec host = codegen::TargetSpec::host();
  std::vector<codegen::TargetSpec> out = {host};
  if (!host.is_x86()) return out;
  for (const char* name : {"avx2", "avx512"}) {
    absl::StatusOr<codegen::TargetSpec> t = codegen::TargetSpec::named(name);
    REQUIRE(t.ok());
    if (absl::Status s = t->runs_on(host); !s.ok()) {
      WARN("not checked on this machine: " << s.message());
      continue;
    }
    out.push_back(*t);
  }
  return out;
}

BuiltGroup build_group(const GroupCase& c, int num_threads, const codegen::TargetSpec& target) {
  BuiltGroup b;
  GraphBuilder gb(ctx(), "group");
  std::vector<ValueId> ins;
  std::vector<Tensor> feeds;
  std::vector<bool> is_const;
  std::vector<Tensor> group_values;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    if (c.inputs[i].empty()) {
      ins.push_back(kNoValue);
    } else if (c.constant[i]) {
      ins.push_back(gb.add_constant(name, c.inputs[i]));
    } else {
      ins.push_back(gb.add_input(name, c.inputs[i].type()));
      feeds.push_back(c.inputs[i]);
    }
  }
  absl::StatusOr<ValueId> anchor = gb.add(c.op, ins, c.attrs, "anchor");
  INFO(anchor.status().ToString());
  REQUIRE(anchor.ok());
  ValueId last = *anchor;
  Tensor residual;
  if (c.chain == Chain::add_relu) {
    residual = random_f32(gb.value(last).type.shape, 99);
    ValueId r = gb.add_input("residual", residual.type());
    feeds.push_back(residual);
    absl::StatusOr<ValueId> add = gb.add("Add", {last, r}, nullptr, "add");
    REQUIRE(add.ok());
    last = *add;
  }
  if (c.chain != Chain::none) {
    absl::StatusOr<ValueId> relu = gb.add("Relu", {last}, nullptr, "relu");
    REQUIRE(relu.ok());
    last = *relu;
  }
  gb.add_output(last);
  absl::StatusOr<Graph> g = gb.finish();
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  b.graph = std::make_shared<Graph>(std::move(*g));
  absl::StatusOr<std::vector<Tensor>> expected = run_reference(*b.graph, feeds);
  INFO(expected.status().ToString());
  REQUIRE(expected.ok());
  b.expected = *expected;

  // The TE group.
  b.registry = conv_dense_registry(target);
  b.def = b.registry->find(c.op);
  REQUIRE(b.def);
  std::vector<te::Tensor> te_inputs;
  te_ops::AnchorGroup& grp = b.group;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i].empty()) {
      te_inputs.emplace_back();
      continue;
    }
    te::Tensor p = te::placeholder(c.inputs[i].shape(), c.inputs[i].dtype(), "in" + std::to_string(i));
    te_inputs.push_back(p);
    grp.inputs.push_back(p);
    grp.input_is_constant.push_back(c.constant[i]);
    b.values.push_back(c.inputs[i]);
  }
  const Node& node = b.graph->node(0);
  absl::StatusOr<std::vector<te::Tensor>> outs = b.def->compute(*b.graph, node, te_inputs);
  INFO(outs.status().ToString());
  REQUIRE(outs.ok());
  te::Tensor t = outs->front();
  grp.anchor_output = t;
  if (c.chain == Chain::add_relu) {
    te::Tensor r = te::placeholder(residual.shape(), DType::f32, "residual");
    grp.inputs.push_back(r);
    grp.input_is_constant.push_back(false);
    b.values.push_back(residual);
    te::Tensor prev = t;
    t = te::compute(
        prev.shape(),
        [&](const std::vector<te::Var>& v) {
          std::vector<te::Expr> i(v.begin(), v.end());
          return prev(i) + r(i);
        },
        "add");
  }
  if (c.chain != Chain::none) {
    te::Tensor prev = t;
    t = te::compute(
        prev.shape(),
        [&](const std::vector<te::Var>& v) {
          std::vector<te::Expr> i(v.begin(), v.end());
          return te::maximum(prev(i), 0.0f);
        },
        "relu");
  }
  grp.graph = b.graph.get();
  grp.anchor = 0;
  grp.outputs = {t};
  grp.target = target;
  grp.num_threads = num_threads;
  return b;
}

double run_and_compare(const BuiltGroup& b, const te_ops::ScheduledGroup& scheduled, int tasks) {
  absl::StatusOr<tune::GroupKernel> k = tune::GroupKernel::compile(b.group, scheduled);
  INFO(k.status().ToString() << "\n" << scheduled.schedule.to_string());
  REQUIRE(k.ok());
  absl::Status s = k->bind(b.values);
  INFO(s.ToString());
  REQUIRE(s.ok());
  k->run(tasks, nullptr);
  REQUIRE(k->outputs().size() == 1);
  INFO(describe_mismatch(k->outputs()[0], b.expected[0]));
  return max_scaled_error(k->outputs()[0], b.expected[0]);
}

}  // namespace collage::testing
