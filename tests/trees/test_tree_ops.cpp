// The operators added for tree programs, GatherElements and ArgMax: ONNX semantics on small
// inputs, negative indices and axes, and their errors.
#include <catch2/catch.hpp>

#include "collage/ops.h"
#include "collage/reference.h"
#include "trees/tree_test_util.h"

namespace collage::testing {
namespace {

absl::StatusOr<std::vector<Tensor>> run1(std::string_view op, std::vector<Tensor> inputs,
                                         std::shared_ptr<const OpAttrs> attrs) {
  GraphBuilder b(tree_test_context());
  std::vector<ValueId> ins;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(b.add_input("in" + std::to_string(i), inputs[i].type()));
  auto y = b.add(op, ins, std::move(attrs));
  if (!y.ok()) return y.status();
  b.add_output(*y);
  auto g = b.finish();
  if (!g.ok()) return g.status();
  return run_reference(*g, inputs);
}

TEST_CASE("GatherElements", "[trees][ops]") {
  const Tensor data = Tensor::from_f32({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
  SECTION("axis 1, negative index, narrower indices") {
    auto y =
        run1("GatherElements", {data, Tensor::from_i64({2, 2}, std::vector<int64_t>{2, 0, -1, 1})},
             make_attrs<GatherElementsAttrs>([](auto& a) { a.axis = 1; }));
    REQUIRE(y.ok());
    CHECK((*y)[0].shape() == Shape{2, 2});
    CHECK(std::vector<float>((*y)[0].data<float>(), (*y)[0].data<float>() + 4) ==
          std::vector<float>{3, 1, 6, 5});
  }
  SECTION("axis 0 with more rows than data, i32 indices, bool data") {
    Tensor idx(DType::i32, {3, 3});
    const int32_t v[] = {1, 0, 1, 0, 0, 0, 1, 1, -2};
    std::copy(v, v + 9, idx.data<int32_t>());
    auto y = run1("GatherElements", {data, idx},
                  make_attrs<GatherElementsAttrs>([](auto& a) { a.axis = -2; }));
    REQUIRE(y.ok());
    CHECK(std::vector<float>((*y)[0].data<float>(), (*y)[0].data<float>() + 9) ==
          std::vector<float>{4, 2, 6, 1, 2, 3, 4, 5, 3});
  }
  SECTION("errors") {
    auto attrs = make_attrs<GatherElementsAttrs>([](auto& a) { a.axis = 1; });
    check_status(
        run1("GatherElements", {data, Tensor::from_i64({2}, std::vector<int64_t>{0, 1})}, attrs)
            .status(),
        absl::StatusCode::kInvalidArgument, "must have the rank of data");
    check_status(run1("GatherElements",
                      {data, Tensor::from_i64({3, 1}, std::vector<int64_t>{0, 1, 2})}, attrs)
                     .status(),
                 absl::StatusCode::kInvalidArgument, "is larger than data f32[2x3] on axis 0");
    check_status(
        run1("GatherElements", {data, Tensor::from_i64({1, 1}, std::vector<int64_t>{3})}, attrs)
            .status(),
        absl::StatusCode::kInvalidArgument, "index 3 (indices element 0) is out of range");
  }
}

TEST_CASE("ArgMax", "[trees][ops]") {
  const Tensor x = Tensor::from_f32({2, 3}, std::vector<float>{1, 5, 5, 7, -1, 7});
  auto argmax = [&](int64_t axis, int64_t keepdims, int64_t last) {
    auto y = run1("ArgMax", {x}, make_attrs<ArgMaxAttrs>([&](auto& a) {
                    a.axis = axis;
                    a.keepdims = keepdims;
                    a.select_last_index = last;
                  }));
    REQUIRE(y.ok());
    return (*y)[0];
  };
  Tensor y = argmax(1, 0, 0);
  CHECK(y.dtype() == DType::i64);
  CHECK(y.shape() == Shape{2});
  CHECK(y.to_int64_vector() == std::vector<int64_t>{1, 0});
  CHECK(argmax(-1, 1, 1).shape() == Shape{2, 1});
  CHECK(argmax(-1, 1, 1).to_int64_vector() == std::vector<int64_t>{2, 2});
  CHECK(argmax(0, 1, 0).to_int64_vector() == std::vector<int64_t>{1, 0, 1});
  check_status(run1("ArgMax", {x}, make_attrs<ArgMaxAttrs>([](auto& a) { a.axis = 2; })).status(),
               absl::StatusCode::kInvalidArgument, "axis 2 is out of range for rank 2");
}

}  // namespace
}  // namespace collage::testing
