// Data of the dnnl tests: the group check and the post-op chains.
#include "post_op_cases.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "backends/common/module_kernel.h"
#include "collage/backends/dnnl.h"
#include "collage/ops.h"
#include "dnnl_module.h"

namespace collage::testing {

const Backend& dnnl_backend() {
  static const std::unique_ptr<Backend> backend = make_dnnl_backend();
  return *backend;
}

GroupCheck dnnl_check(const TestGraph& t, const Graph& g, double tolerance) {
  GroupCheck check{.tolerance = tolerance,
                   .elementwise = true,
                   .floor_fraction = 0.01,
                   .claim = true,
                   .threads = {0},
                   .inputs = t.feed(g)};
  // The record is fully packed: loading it reorders no constant.
  check.inspect = [](const GroupResult& r, const Graph& group) {
    KernelDesc desc(r.record, group);
    const rt_dnnl::ProbeResult probe = rt_dnnl::probe_kernel(desc.desc());
    INFO(probe.error);
    REQUIRE(probe.error.empty());
    CHECK(probe.packed.empty());
  };
  return check;
}
namespace {

template <typename A, typename F>
std::shared_ptr<const OpAttrs> attrs(F&& f) {
  return make_attrs<A>(std::forward<F>(f));
}

// A shape like v's with only axis 1 kept (the per-channel broadcast shape, without the batch).
Shape channel_shape(const Shape& s) {
  Shape c(s.begin() + 1, s.end());
  for (size_t i = 1; i < c.size(); ++i) c[i] = 1;
  return c;
}

ValueId unary(TestGraph& t, ValueId v, const char* op) {
  return t.op(op, {v});
}

}  // namespace

std::vector<PostOpCase> single_post_ops() {
  std::vector<PostOpCase> c;
  auto add = [&](std::string name, std::function<ValueId(TestGraph&, ValueId)> f,
                 bool channelwise = false, double tolerance = 1e-4) {
    c.push_back({std::move(name), std::move(f), channelwise, tolerance});
  };
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "HardSwish", "Exp", "Abs", "Neg"})
    add(op, [op](TestGraph& t, ValueId v) { return unary(t, v, op); });
  add("LeakyRelu", [](TestGraph& t, ValueId v) {
    return t.op("LeakyRelu", {v}, attrs<LeakyReluAttrs>([](auto& a) { a.alpha = 0.2f; }));
  });
  add("Gelu", [](TestGraph& t, ValueId v) { return t.op("Gelu", {v}); });
  add("Gelu-tanh", [](TestGraph& t, ValueId v) {
    return t.op("Gelu", {v}, attrs<GeluAttrs>([](auto& a) { a.approximate = "tanh"; }));
  });
  add("Clip", [](TestGraph& t, ValueId v) {
    return t.op("Clip", {v}, attrs<ClipAttrs>([](auto& a) {
                  a.min = -0.5f;
                  a.max = 0.7f;
                }));
  });
  add("Clip-min-only", [](TestGraph& t, ValueId v) {
    return t.op("Clip", {v}, attrs<ClipAttrs>([](auto& a) { a.min = 0.1f; }));
  });
  add("HardSigmoid", [](TestGraph& t, ValueId v) {
    return t.op("HardSigmoid", {v}, attrs<HardSigmoidAttrs>([](auto& a) {
                  a.alpha = 0.3f;
                  a.beta = 0.4f;
                }));
  });
  // Functions with a restricted domain get an argument >= 0.5 first (Sqrt near 0 would turn
  // the few-ulp summation-order differences of its argument into large relative errors).
  add("Sqrt", [](TestGraph& t, ValueId v) {
    return t.op("Sqrt", {t.op("Add", {t.op("Abs", {v}), t.constant(Tensor::scalar_f32(0.5f))})});
  });
  // oneDNN's vectorised log is accurate to a few 1e-6 absolute near 1, where log is near 0.
  add(
      "Log",
      [](TestGraph& t, ValueId v) {
        return t.op("Log", {t.op("Add", {t.op("Abs", {v}), t.constant(Tensor::scalar_f32(0.5f))})});
      },
      false, 1e-3);
  add("Reciprocal", [](TestGraph& t, ValueId v) {
    return t.op("Reciprocal",
                {t.op("Add", {t.op("Abs", {v}), t.constant(Tensor::scalar_f32(1.f))})});
  });
  add(
      "BatchNormalization",
      [](TestGraph& t, ValueId v) {
        const Shape ch = {t.shape(v)[1]};
        return t.op("BatchNormalization",
                    {v, t.constant(ch), t.constant(ch), t.constant(ch), t.constant(ch, 0.5f, 2.f)});
      },
      true);
  add("Add-same-shape-input", [](TestGraph& t, ValueId v) {
    return t.op("Add", {v, t.input(t.shape(v))});
  });
  add("Add-input-first", [](TestGraph& t, ValueId v) {
    return t.op("Add", {t.input(t.shape(v)), v});
  });
  add("Add-same-shape-constant", [](TestGraph& t, ValueId v) {
    return t.op("Add", {v, t.constant(t.shape(v))});
  });
  add(
      "Add-per-channel",
      [](TestGraph& t, ValueId v) {
        return t.op("Add", {v, t.constant(channel_shape(t.shape(v)))});
      },
      true);
  add(
      "Mul-per-channel",
      [](TestGraph& t, ValueId v) {
        return t.op("Mul", {t.constant(channel_shape(t.shape(v))), v});
      },
      true);
  add("Sub-scalar", [](TestGraph& t, ValueId v) {
    return t.op("Sub", {v, t.constant(Tensor::scalar_f32(0.25f))});
  });
  // The fused result as the second operand of Sub and Div.
  add("Sub-from-input", [](TestGraph& t, ValueId v) {
    return t.op("Sub", {t.input(t.shape(v)), v});
  });
  add(
      "Div-into-per-channel",
      [](TestGraph& t, ValueId v) {
        // Kept away from 0, where 1/x would amplify summation-order differences.
        ValueId d = t.op("Add", {t.op("Abs", {v}), t.constant(Tensor::scalar_f32(1.f))});
        return t.op("Div", {t.constant(channel_shape(t.shape(v))), d});
      },
      true);
  add(
      "Div-per-channel",
      [](TestGraph& t, ValueId v) {
        return t.op("Div", {v, t.constant(channel_shape(t.shape(v)), 0.5f, 2.f)});
      },
      true);
  add(
      "Mul-broadcast-input",
      [](TestGraph& t, ValueId v) {
        Shape s = t.shape(v);
        s[0] = 1;
        return t.op("Mul", {v, t.input(channel_shape(s))});
      },
      true);
  add("Add-last-axis", [](TestGraph& t, ValueId v) {
    return t.op("Add", {v, t.constant({t.shape(v).back()})});
  });
  return c;
}

std::vector<PostOpCase> chained_post_ops() {
  std::vector<PostOpCase> singles = single_post_ops();
  auto find = [&](const std::string& name) {
    for (const PostOpCase& p : singles)
      if (p.name == name) return p;
    return PostOpCase{};
  };
  // Pairs of every main kind: eltwise, sum, broadcast binary (constant and input), BN.
  const std::vector<std::string> kinds = {"Relu",
                                          "Gelu",
                                          "HardSigmoid",
                                          "Add-same-shape-input",
                                          "Add-per-channel",
                                          "Mul-broadcast-input",
                                          "BatchNormalization",
                                          "Sub-scalar",
                                          "Sub-from-input"};
  std::vector<PostOpCase> c;
  for (const std::string& a : kinds)
    for (const std::string& b : kinds) {
      PostOpCase pa = find(a), pb = find(b);
      // HardSigmoid's linear step and the negation of a swapped Sub do not merge when a clip
      // or the addition sits between them.
      const bool refused = (a == "HardSigmoid" && b == "Sub-from-input") ||
                           (a == "Sub-from-input" && b == "HardSigmoid");
      c.push_back(
          {a + "+" + b, [pa, pb](TestGraph& t, ValueId v) { return pb.apply(t, pa.apply(t, v)); },
           pa.channelwise || pb.channelwise, std::max(pa.tolerance, pb.tolerance), refused});
    }
  const std::vector<std::vector<std::string>> triples = {
      {"BatchNormalization", "Add-same-shape-input", "Relu"},
      {"Add-same-shape-input", "Relu", "Mul-per-channel"},
      {"Add-per-channel", "Clip", "Add-same-shape-input"},
      {"Sigmoid", "Mul-broadcast-input", "Tanh"},
      {"BatchNormalization", "HardSwish", "Add-last-axis"},
  };
  for (const auto& names : triples) {
    std::vector<PostOpCase> ps;
    std::string name;
    bool channelwise = false;
    for (const std::string& n : names) {
      ps.push_back(find(n));
      if (!name.empty()) name += '+';
      name += n;
      channelwise = channelwise || ps.back().channelwise;
    }
    c.push_back({name,
                 [ps](TestGraph& t, ValueId v) {
                   for (const PostOpCase& p : ps) v = p.apply(t, v);
                   return v;
                 },
                 channelwise});
  }
  return c;
}

void check_post_op_case(const TestGraph& t, const Graph& g, const PostOpCase& p) {
  if (!p.refused) {
    check_group(dnnl_backend(), g, dnnl_check(t, g, p.tolerance));
    return;
  }
  const GroupAttempt r = try_group(dnnl_backend(), g);
  CHECK_FALSE(r.offered);
  CHECK_THAT(std::string(r.build.message()), Catch::Contains("oneDNN 2.6"));
}

}  // namespace collage::testing
