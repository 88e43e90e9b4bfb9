// dnnl conformance: MatMul (2-D, batched, broadcast batch dims, 1-D operands, constant and
// computed weights) and Gemm (transA/transB, alpha/beta, every C shape), with post-ops.
#include <catch2/catch.hpp>

#include "backends/common/module_kernel.h"
#include "collage/ops.h"
#include "dnnl_module.h"
#include "common/backend_check.h"
#include "post_op_cases.h"

using namespace collage;
using namespace collage::testing;

namespace {

struct MatMulCase {
  std::string name;
  Shape a, b;
  bool b_constant;
};

std::vector<MatMulCase> matmul_cases() {
  return {
      {"7x9 x 9x5 constant", {7, 9}, {9, 5}, true},
      {"7x9 x 9x5 computed", {7, 9}, {9, 5}, false},
      {"batched 3x7x9 x 9x5 constant", {3, 7, 9}, {9, 5}, true},
      {"batched 2x3x7x9 x 2x3x9x5", {2, 3, 7, 9}, {2, 3, 9, 5}, false},
      {"broadcast 2x1x7x9 x 3x9x5", {2, 1, 7, 9}, {3, 9, 5}, false},
      {"1-D A", {9}, {9, 5}, true},
      {"1-D B", {3, 7, 9}, {9}, false},
      {"1-D both", {9}, {9}, false},
      {"BERT-like 1x8x64 x 64x96", {1, 8, 64}, {64, 96}, true},
  };
}

ValueId add_matmul(TestGraph& t, const MatMulCase& c) {
  return t.op("MatMul", {t.input(c.a), c.b_constant ? t.constant(c.b) : t.input(c.b)});
}

}  // namespace

TEST_CASE("dnnl matmul: shapes, alone and with bias + Relu", "[dnnl][matmul]") {
  for (const MatMulCase& c : matmul_cases()) {
    DYNAMIC_SECTION(c.name) {
      TestGraph t;
      Graph g = t.finish(add_matmul(t, c));
      CHECK(check_group(dnnl_backend(), g, dnnl_check(t, g)).origin == "dnnl.matmul");
    }
    DYNAMIC_SECTION(c.name << " + bias + Relu") {
      TestGraph t;
      ValueId v = add_matmul(t, c);
      const Shape& s = t.shape(v);
      if (!s.empty()) v = t.op("Add", {v, t.constant({s.back()})});
      Graph g = t.finish(t.op("Relu", {v}));
      check_group(dnnl_backend(), g, dnnl_check(t, g));
    }
  }
}

TEST_CASE("dnnl matmul: every post-op and chain", "[dnnl][matmul]") {
  std::vector<PostOpCase> cases = single_post_ops();
  for (PostOpCase& p : chained_post_ops()) cases.push_back(std::move(p));
  const std::vector<MatMulCase> shapes = matmul_cases();
  for (const PostOpCase& p : cases) {
    for (size_t si : {size_t{0}, size_t{2}, size_t{4}}) {
      DYNAMIC_SECTION(p.name << " on " << shapes[si].name) {
        TestGraph t;
        Graph g = t.finish(p.apply(t, add_matmul(t, shapes[si])));
        check_post_op_case(t, g, p);
      }
    }
  }
}

TEST_CASE("dnnl matmul: a projection with its bias and residual adds runs a fast kernel",
          "[dnnl][matmul]") {
  // A transformer's output projection: without AVX-512, oneDNN 2.6 ran this post-op list (a
  // binary add, then the sum) on its reference matmul, seconds per run on BERT-base.
  for (bool residual : {true, false}) {
    DYNAMIC_SECTION((residual ? "bias + residual" : "bias only")) {
      TestGraph t;
      ValueId v = t.op("MatMul", {t.input({2, 32, 128}), t.constant({128, 96})});
      v = t.op("Add", {v, t.constant({96})});
      if (residual) v = t.op("Add", {v, t.input({2, 32, 96})});
      Graph g = t.finish(v);
      GroupCheck check = dnnl_check(t, g);
      std::vector<std::string> impls;
      check.inspect = [&impls, packed = check.inspect](const GroupResult& r, const Graph& group) {
        packed(r, group);
        impls = rt_dnnl::probe_kernel(KernelDesc(r.record, group).desc()).implementations;
      };
      check_group(dnnl_backend(), g, check);
      REQUIRE_FALSE(impls.empty());
      for (const std::string& impl : impls) {
        INFO(impl);
        CHECK(impl.rfind("ref", 0) != 0);
      }
    }
  }
}

TEST_CASE("dnnl gemm: transposes, alpha, beta and C shapes", "[dnnl][gemm]") {
  const int64_t m = 7, k = 9, n = 5;
  const std::vector<Shape> c_shapes = {{}, {n}, {1, n}, {m, n}, {m, 1}, {1}};
  for (int trans_a : {0, 1})
    for (int trans_b : {0, 1})
      for (bool b_const : {true, false})
        for (float alpha : {1.f, 0.5f})
          for (size_t ci = 0; ci <= c_shapes.size(); ++ci)
            for (bool c_const : {true, false}) {
              const bool has_c = ci < c_shapes.size();
              if (!has_c && !c_const) continue;
              for (float beta : {1.f, 2.f}) {
                if (!has_c && beta != 1.f) continue;
                DYNAMIC_SECTION("transA " << trans_a << " transB " << trans_b << " B "
                                          << (b_const ? "const" : "input") << " alpha " << alpha
                                          << " C " << (has_c ? shape_to_string(c_shapes[ci]) : "-")
                                          << (c_const ? " const" : " input") << " beta " << beta) {
                  TestGraph t;
                  const Shape as = trans_a ? Shape{k, m} : Shape{m, k};
                  const Shape bs = trans_b ? Shape{n, k} : Shape{k, n};
                  std::vector<ValueId> in = {t.input(as), b_const ? t.constant(bs) : t.input(bs)};
                  if (has_c)
                    in.push_back(c_const ? t.constant(c_shapes[ci]) : t.input(c_shapes[ci]));
                  auto attrs = make_attrs<GemmAttrs>([&](GemmAttrs& a) {
                    a.transA = trans_a;
                    a.transB = trans_b;
                    a.alpha = alpha;
                    a.beta = beta;
                  });
                  ValueId v = t.op("Gemm", in, attrs);
                  Graph g = t.finish(t.op("Relu", {v}));
                  GroupAttempt r = try_group(dnnl_backend(), g);
                  if (has_c && !c_const && beta != 1.f) {
                    // A computed C with beta != 1 has no oneDNN form: refused, not miscomputed.
                    CHECK_FALSE(r.offered);
                    CHECK_FALSE(r.build.ok());
                  } else {
                    check_group(dnnl_backend(), g, dnnl_check(t, g));
                  }
                }
              }
            }
}

TEST_CASE("dnnl gemm: every post-op", "[dnnl][gemm]") {
  for (const PostOpCase& p : single_post_ops()) {
    if (p.channelwise) continue;  // a 2-D result has no channel axis 1 in the NCHW sense
    DYNAMIC_SECTION(p.name) {
      TestGraph t;
      ValueId v = t.op("Gemm", {t.input({7, 9}), t.constant({5, 9}), t.constant({5})},
                       make_attrs<GemmAttrs>([](GemmAttrs& a) { a.transB = 1; }));
      Graph g = t.finish(p.apply(t, v));
      check_post_op_case(t, g, p);
    }
  }
}
