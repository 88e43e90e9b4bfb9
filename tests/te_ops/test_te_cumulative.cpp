// Conformance of the TE computes of CumSum and CumProd (lib/te_ops/cumulative_op.cpp) and
// ReduceProd against the reference kernels.
#include <catch2/catch.hpp>

#include "collage/ops/elementwise.h"
#include "collage/ops/indexing.h"
#include "common/backend_check.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

TEST_CASE("te_ops: CumSum and CumProd, exclusive and reverse, constant or run-time axis",
          "[te_ops]") {
  Context ctx;
  for (const char* op : {"CumSum", "CumProd"}) {
    for (DType t : {DType::f32, DType::f16, DType::i32, DType::i64, DType::u32, DType::f64}) {
      for (int exclusive = 0; exclusive < 2; ++exclusive) {
        for (int reverse = 0; reverse < 2; ++reverse) {
          auto attrs = make_attrs<CumSumAttrs>([&](auto& a) {
            a.exclusive = exclusive;
            a.reverse = reverse;
          });
          for (int64_t axis : {0, 1, -1}) {
            INFO(op << " " << dtype_name(t) << " exclusive " << exclusive << " reverse "
                    << reverse << " axis " << axis);
            const std::vector<TensorType> types = {{t, {3, 7, 5}}, {DType::i64, {}}};
            // The axis a constant of the graph (the same code for every value: it is read when
            // the kernel runs), then a graph input.
            check_group(native_backend(),
                        single_op_graph(ctx, op, types, attrs,
                                        {Tensor(), Tensor::scalar_i64(axis)}),
                        {.tolerance = 1e-4, .lo = 0.5f, .hi = 1.5f, .claim = true});
            Tensor x = random_tensor({t, {3, 7, 5}}, 9, 0.5f, 1.5f);
            check_group(native_backend(), single_op_graph(ctx, op, types, attrs),
                        {.tolerance = 1e-4,
                         .claim = true,
                         .inputs = {x, Tensor::scalar_i64(axis)}});
          }
        }
      }
    }
  }
}

TEST_CASE("te_ops: ReduceProd", "[te_ops]") {
  Context ctx;
  for (DType t : {DType::f32, DType::i32, DType::i64}) {
    for (bool keep : {true, false}) {
      INFO("ReduceProd " << dtype_name(t) << " keepdims " << keep);
      auto attrs = make_attrs<ReduceAttrs>([&](auto& a) {
        a.axes = {1};
        a.keepdims = keep ? 1 : 0;
      });
      check_group(native_backend(), single_op_graph(ctx, "ReduceProd", {{t, {4, 6, 3}}}, attrs),
                  {.tolerance = 1e-4, .lo = 0.5f, .hi = 1.5f, .claim = true});
    }
  }
}
