// Conformance of the loss TE computes (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss)
// against the reference kernels: every reduction, weights, an ignored class, spatial targets.
#include <catch2/catch.hpp>

#include "collage/ops/loss.h"
#include "common/backend_check.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

TEST_CASE("te_ops: the losses match the reference", "[te_ops]") {
  Context ctx;
  // Targets are drawn from [0, 5): five classes or more keep them in range.
  const std::vector<std::pair<Shape, Shape>> shapes = {{{7, 5}, {7}}, {{3, 6, 4, 9}, {3, 4, 9}}};
  for (const char* op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"})
    for (const auto& [x, t] : shapes)
      for (const char* reduction : {"none", "sum", "mean"})
        for (bool weighted : {false, true})
          for (int64_t ignore : {LossAttrs::kNoIgnoreIndex, int64_t{2}}) {
            INFO(op << " " << shape_to_string(x) << " " << reduction << " weighted " << weighted
                    << " ignore " << ignore);
            std::vector<TensorType> ins = {{DType::f32, x}, {DType::i64, t}};
            if (weighted) ins.push_back({DType::f32, {x[1]}});
            auto attrs = make_attrs<LossAttrs>([&](auto& a) {
              a.reduction = reduction;
              a.ignore_index = ignore;
            });
            check_group(native_backend(), single_op_graph(ctx, op, ins, attrs), {1e-4, 0.1f, 2.f});
          }
  // SoftmaxCrossEntropyLoss's log_prob output, from f16 scores.
  check_group(native_backend(),
              single_op_graph(ctx, "SoftmaxCrossEntropyLoss",
                              {{DType::f16, {4, 5, 3}}, {DType::i32, {4, 3}}},
                              make_attrs<LossAttrs>([](auto& a) { a.reduction = "sum"; }), {}, 2),
              {2e-3});
}
