// Reference kernels and shape inference of the tensor operators (data movement, shapes, Resize),
// checked on single-node graphs against numpy / ONNX Runtime values written out as literals.
#include <catch2/catch.hpp>
#include <cstring>
#include <limits>

#include "collage/graph.h"
#include "collage/ops/geometry.h"
#include "collage/ops/pooling.h"
#include "collage/ops/signal.h"
#include "collage/ops/tensor.h"
#include "collage/reference.h"
#include "common/test_util.h"

namespace collage {
namespace {

using testing::describe_mismatch;
using testing::max_relative_error;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

const Context& ctx() {
  static const Context c;
  return c;
}

template <typename T>
Tensor make(DType dtype, Shape shape, const std::vector<T>& values) {
  Tensor t(dtype, std::move(shape));
  REQUIRE(static_cast<int64_t>(values.size()) == t.numel());
  REQUIRE(sizeof(T) == dtype_size(dtype));
  if (!values.empty()) std::memcpy(t.raw(), values.data(), t.bytes());
  return t;
}
Tensor f32(Shape s, const std::vector<float>& v) {
  return make(DType::f32, std::move(s), v);
}
Tensor i64(Shape s, const std::vector<int64_t>& v) {
  return make(DType::i64, std::move(s), v);
}
Tensor i32(Shape s, const std::vector<int32_t>& v) {
  return make(DType::i32, std::move(s), v);
}

// 0, 1, 2, ... converted to `dtype` (bool: alternating false/true).
Tensor iota(DType dtype, Shape shape) {
  Tensor f(DType::f32, shape);
  for (int64_t i = 0; i < f.numel(); ++i)
    f.data<float>()[i] = static_cast<float>(dtype == DType::boolean ? i % 2 : i);
  return f.cast(dtype);
}

struct Input {
  Tensor value;
  bool constant = false;
};

// Builds `op(inputs...)` as a one-node graph (constants where asked), runs the reference executor
// and returns the outputs.
absl::StatusOr<std::vector<Tensor>> run_op(std::string_view op, const std::vector<Input>& inputs,
                                           std::shared_ptr<const OpAttrs> attrs = nullptr,
                                           int num_outputs = 1, std::string name = "n") {
  GraphBuilder b(ctx());
  std::vector<ValueId> ins;
  std::vector<Tensor> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string n = "x" + std::to_string(i);
    if (inputs[i].constant) {
      ins.push_back(b.add_constant(n, inputs[i].value));
    } else {
      ins.push_back(b.add_input(n, inputs[i].value.type()));
      feeds.push_back(inputs[i].value);
    }
  }
  auto outs = b.add_node(op, ins, std::move(attrs), std::move(name), num_outputs);
  if (!outs.ok()) return outs.status();
  for (ValueId v : *outs) b.add_output(v);
  auto g = b.finish();
  if (!g.ok()) return g.status();
  return run_reference(*g, feeds);
}

Tensor run1(std::string_view op, const std::vector<Input>& inputs,
            std::shared_ptr<const OpAttrs> attrs = nullptr) {
  auto r = run_op(op, inputs, std::move(attrs));
  INFO(op << ": " << r.status().ToString());
  REQUIRE(r.ok());
  REQUIRE(r->size() == 1);
  return r->front();
}

// The error of adding `op` on inputs of the given types to a graph (shape inference).
absl::Status infer_error(std::string_view op, const std::vector<TensorType>& types,
                         std::shared_ptr<const OpAttrs> attrs, std::string name = "n",
                         int num_outputs = 1) {
  GraphBuilder b(ctx());
  std::vector<ValueId> ins;
  for (const TensorType& t : types) ins.push_back(b.add_input("x", t));
  auto r = b.add_node(op, ins, std::move(attrs), std::move(name), num_outputs);
  return r.ok() ? absl::OkStatus() : r.status();
}

void check_error(const absl::Status& s, std::string_view message_part) {
  INFO(s.ToString());
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(s.message().find(std::string(message_part)) != std::string_view::npos);
}

void check_equal(const Tensor& actual, const Tensor& expected) {
  INFO(describe_mismatch(actual, expected));
  CHECK(actual.identical(expected));
}

void check_close(const Tensor& actual, const Tensor& expected, double tol = 1e-5) {
  INFO(describe_mismatch(actual, expected));
  CHECK(max_relative_error(actual, expected) <= tol);
}

TensorType f32_type(Shape s) {
  return {DType::f32, std::move(s)};
}

TEST_CASE("Concat joins along positive and negative axes", "[ops][tensor]") {
  Tensor a = iota(DType::f32, {2, 2}), b = iota(DType::f32, {2, 3});
  auto axis1 = make_attrs<ConcatAttrs>([](auto& x) { x.axis = -1; });
  check_equal(run1("Concat", {{a}, {b}}, axis1), f32({2, 5}, {0, 1, 0, 1, 2, 2, 3, 3, 4, 5}));
  auto axis0 = make_attrs<ConcatAttrs>([](auto& x) { x.axis = 0; });
  check_equal(run1("Concat", {{iota(DType::i64, {1, 3})}, {iota(DType::i64, {2, 3})}}, axis0),
              i64({3, 3}, {0, 1, 2, 0, 1, 2, 3, 4, 5}));
  // An input with an empty axis contributes nothing.
  check_equal(run1("Concat", {{iota(DType::f32, {2, 0})}, {a}}, axis1), a);
}

TEST_CASE("Concat shape errors name the input", "[ops][tensor][errors]") {
  auto axis1 = make_attrs<ConcatAttrs>([](auto& x) { x.axis = 1; });
  check_error(infer_error("Concat", {f32_type({1, 2, 3, 4}), f32_type({1, 2, 3})}, axis1, "c"),
              "Concat 'c': input 1 has rank 3, expected 4");
  check_error(infer_error("Concat", {f32_type({2, 3}), f32_type({4, 3})}, axis1, "c"),
              "Concat 'c': input 1 has shape 4x3, which differs from input 0 (2x3) outside "
              "axis 1");
  check_error(infer_error("Concat", {f32_type({2, 3}), {DType::i64, {2, 3}}}, axis1, "c"),
              "input 1 has dtype i64, expected f32");
  auto axis5 = make_attrs<ConcatAttrs>([](auto& x) { x.axis = 5; });
  check_error(infer_error("Concat", {f32_type({2, 3}), f32_type({2, 3})}, axis5, "c"),
              "Concat 'c': axis 5 is out of range for rank 2");
}

TEST_CASE("Split into equal, explicit and uneven pieces", "[ops][tensor]") {
  Tensor x = iota(DType::f32, {2, 7});
  auto uneven = make_attrs<SplitAttrs>([](auto& a) { a.axis = -1; });
  auto r = run_op("Split", {{x}}, uneven, 3);
  REQUIRE(r.ok());
  REQUIRE(r->size() == 3);
  check_equal((*r)[0], f32({2, 3}, {0, 1, 2, 7, 8, 9}));
  check_equal((*r)[1], f32({2, 3}, {3, 4, 5, 10, 11, 12}));
  check_equal((*r)[2], f32({2, 1}, {6, 13}));

  auto explicit_split = make_attrs<SplitAttrs>([](auto& a) {
    a.axis = 1;
    a.split = {2, 0, 5};
  });
  r = run_op("Split", {{x}}, explicit_split, -1);
  REQUIRE(r.ok());
  REQUIRE(r->size() == 3);
  check_equal((*r)[0], f32({2, 2}, {0, 1, 7, 8}));
  CHECK((*r)[1].shape() == Shape{2, 0});
  check_equal((*r)[2], f32({2, 5}, {2, 3, 4, 5, 6, 9, 10, 11, 12, 13}));
}

TEST_CASE("Split errors", "[ops][tensor][errors]") {
  auto bad_sum = make_attrs<SplitAttrs>([](auto& a) { a.split = {1, 1}; });
  check_error(infer_error("Split", {f32_type({3, 2})}, bad_sum, "s", 2),
              "Split 's': split [1, 1] sums to 2, but axis 0 has size 3");
  check_error(infer_error("Split", {f32_type({3, 2})}, bad_sum, "s", 3),
              "has 2 entries but 3 outputs are requested");
  check_error(infer_error("Split", {f32_type({3, 2})}, nullptr, "s", -1),
              "the number of pieces is unknown");
  check_error(infer_error("Split", {f32_type({5})}, nullptr, "s", 4),
              "cannot split axis 0 of size 5 into 4 pieces of 2");
}

TEST_CASE("Slice with negative steps and clamped ends", "[ops][tensor]") {
  Tensor x = iota(DType::i64, {3, 4, 5});
  auto rev = make_attrs<SliceAttrs>([](auto& a) {
    a.starts = {-1};
    a.ends = {kMin};
    a.axes = {1};
    a.steps = {-1};
  });
  check_equal(run1("Slice", {{x}}, rev),
              i64({3, 4, 5}, {15, 16, 17, 18, 19, 10, 11, 12, 13, 14, 5,  6,  7,  8,  9,
                              0,  1,  2,  3,  4,  35, 36, 37, 38, 39, 30, 31, 32, 33, 34,
                              25, 26, 27, 28, 29, 20, 21, 22, 23, 24, 55, 56, 57, 58, 59,
                              50, 51, 52, 53, 54, 45, 46, 47, 48, 49, 40, 41, 42, 43, 44}));
  auto mix = make_attrs<SliceAttrs>([](auto& a) {
    a.starts = {1, 4};
    a.ends = {kMax, 0};
    a.axes = {0, -1};
    a.steps = {1, -2};
  });
  check_equal(run1("Slice", {{x}}, mix),
              i64({2, 4, 2}, {24, 22, 29, 27, 34, 32, 39, 37, 44, 42, 49, 47, 54, 52, 59, 57}));
  auto leading = make_attrs<SliceAttrs>([](auto& a) {
    a.starts = {0, 1, 0};
    a.ends = {100, -1, 5};
    a.steps = {1, 1, 3};
  });
  check_equal(run1("Slice", {{x}}, leading),
              i64({3, 2, 2}, {5, 8, 10, 13, 25, 28, 30, 33, 45, 48, 50, 53}));
  auto empty = make_attrs<SliceAttrs>([](auto& a) {
    a.starts = {3};
    a.ends = {1};
    a.axes = {2};
  });
  CHECK(run1("Slice", {{x}}, empty).shape() == Shape{3, 4, 0});
  auto huge_step = make_attrs<SliceAttrs>([](auto& a) {
    a.starts = {2};
    a.ends = {kMax};
    a.axes = {0};
    a.steps = {kMax};
  });
  CHECK(run1("Slice", {{x}}, huge_step).shape() == Shape{1, 4, 5});
}

TEST_CASE("Slice errors", "[ops][tensor][errors]") {
  auto step0 = make_attrs<SliceAttrs>([](auto& a) {
    a.starts = {0};
    a.ends = {1};
    a.steps = {0};
  });
  check_error(infer_error("Slice", {f32_type({3})}, step0, "sl"),
              "Slice 'sl': step for axis 0 is 0");
  auto twice = make_attrs<SliceAttrs>([](auto& a) {
    a.starts = {0, 0};
    a.ends = {1, 1};
    a.axes = {1, -1};
  });
  check_error(infer_error("Slice", {f32_type({3, 3})}, twice, "sl"), "axis 1 is sliced twice");
  auto lengths = make_attrs<SliceAttrs>([](auto& a) {
    a.starts = {0, 0};
    a.ends = {1};
  });
  check_error(infer_error("Slice", {f32_type({3, 3})}, lengths, "sl"),
              "starts has 2 entries but ends has 1");
  auto axis = make_attrs<SliceAttrs>([](auto& a) {
    a.starts = {0};
    a.ends = {1};
    a.axes = {2};
  });
  check_error(infer_error("Slice", {f32_type({3, 3})}, axis, "sl"),
              "axis 2 is out of range for rank 2");
}

TEST_CASE("Gather with negative and 2-D indices on every axis", "[ops][tensor]") {
  Tensor d = iota(DType::f32, {2, 3, 4});
  auto axis1 = make_attrs<GatherAttrs>([](auto& a) { a.axis = 1; });
  check_equal(run1("Gather", {{d}, {i64({2, 2}, {2, -1, 0, -3})}}, axis1),
              f32({2, 2, 2, 4}, {8,  9,  10, 11, 8,  9,  10, 11, 0,  1,  2,  3,  0,  1,  2,  3,
                                 20, 21, 22, 23, 20, 21, 22, 23, 12, 13, 14, 15, 12, 13, 14, 15}));
  auto last = make_attrs<GatherAttrs>([](auto& a) { a.axis = -1; });
  check_equal(run1("Gather", {{d}, {i32({3}, {3, -4, 1})}}, last),
              f32({2, 3, 3}, {3, 0, 1, 7, 4, 5, 11, 8, 9, 15, 12, 13, 19, 16, 17, 23, 20, 21}));
  // A scalar index removes the axis.
  check_equal(run1("Gather", {{d}, {Tensor::scalar_i64(-1)}}, nullptr),
              f32({3, 4}, {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}));
}

TEST_CASE("Gather index out of range is a kernel error", "[ops][tensor][errors]") {
  auto r = run_op("Gather", {{iota(DType::f32, {3, 2})}, {i64({2}, {1, 3})}}, nullptr, 1, "g");
  REQUIRE(!r.ok());
  check_error(r.status(),
              "Gather 'g': index 3 (indices element 1) is out of range for axis 0 of "
              "size 3");
  r = run_op("Gather", {{iota(DType::f32, {3, 2})}, {i32({1}, {-4})}}, nullptr, 1, "g");
  REQUIRE(!r.ok());
  check_error(r.status(), "index -4");
  check_error(infer_error("Gather", {f32_type({3}), f32_type({1})}, nullptr, "g"),
              "Gather 'g': indices must be i32 or i64, got f32");
}

TEST_CASE("Reshape copies dimensions with 0 and infers -1", "[ops][tensor]") {
  Tensor x = iota(DType::f32, {2, 3, 4});
  auto r = make_attrs<ReshapeAttrs>([](auto& a) { a.shape = {0, -1}; });
  check_equal(run1("Reshape", {{x}}, r), x.reshaped({2, 12}));
  r = make_attrs<ReshapeAttrs>([](auto& a) { a.shape = {-1, 0, 2}; });
  check_equal(run1("Reshape", {{x}}, r), x.reshaped({4, 3, 2}));
  r = make_attrs<ReshapeAttrs>([](auto& a) {
    a.shape = {3, 0};
    a.allowzero = 1;
  });
  CHECK(run1("Reshape", {{iota(DType::f32, {0, 3})}}, r).shape() == Shape{3, 0});
}

TEST_CASE("Reshape errors", "[ops][tensor][errors]") {
  auto r = make_attrs<ReshapeAttrs>([](auto& a) { a.shape = {5, -1}; });
  check_error(infer_error("Reshape", {f32_type({2, 3, 4})}, r, "r1"),
              "Reshape 'r1': cannot reshape 2x3x4 (24 elements) to 5x-1");
  r = make_attrs<ReshapeAttrs>([](auto& a) { a.shape = {-1, -1}; });
  check_error(infer_error("Reshape", {f32_type({4})}, r, "r1"), "has more than one -1");
  r = make_attrs<ReshapeAttrs>([](auto& a) { a.shape = {2, 2, 0}; });
  check_error(infer_error("Reshape", {f32_type({4})}, r, "r1"), "copies dimension 2");
}

TEST_CASE("Flatten, Squeeze and Unsqueeze shapes", "[ops][tensor]") {
  Tensor x = iota(DType::f32, {2, 3, 4});
  auto flat = [](int64_t axis) {
    return make_attrs<FlattenAttrs>([=](auto& a) { a.axis = axis; });
  };
  CHECK(run1("Flatten", {{x}}, flat(0)).shape() == Shape{1, 24});
  CHECK(run1("Flatten", {{x}}, flat(3)).shape() == Shape{24, 1});
  check_equal(run1("Flatten", {{x}}, flat(-1)), x.reshaped({6, 4}));
  check_error(infer_error("Flatten", {x.type()}, flat(4), "f"),
              "Flatten 'f': axis 4 is out of range for rank 3");

  Tensor y = iota(DType::f32, {1, 3, 1, 2});
  CHECK(run1("Squeeze", {{y}}, nullptr).shape() == Shape{3, 2});
  auto sq = make_attrs<SqueezeAttrs>([](auto& a) { a.axes = {-2}; });
  check_equal(run1("Squeeze", {{y}}, sq), y.reshaped({1, 3, 2}));
  sq = make_attrs<SqueezeAttrs>([](auto& a) { a.axes = {1}; });
  check_error(infer_error("Squeeze", {y.type()}, sq, "q"),
              "Squeeze 'q': cannot squeeze axis 1 of size 3");

  auto un = make_attrs<UnsqueezeAttrs>([](auto& a) { a.axes = {-1, 0}; });
  check_equal(run1("Unsqueeze", {{x}}, un), x.reshaped({1, 2, 3, 4, 1}));
  un = make_attrs<UnsqueezeAttrs>([](auto& a) { a.axes = {1, 1}; });
  check_error(infer_error("Unsqueeze", {x.type()}, un, "u"), "axis 1 is listed twice");
  un = make_attrs<UnsqueezeAttrs>([](auto& a) { a.axes = {4}; });
  check_error(infer_error("Unsqueeze", {x.type()}, un, "u"),
              "axis 4 is out of range for output rank 4");
}

// Naive transpose for comparison.
Tensor naive_transpose(const Tensor& x, const std::vector<int64_t>& perm) {
  Shape out_shape(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out_shape[i] = x.shape()[perm[i]];
  Tensor out(x.dtype(), out_shape);
  const auto in_strides = shape_strides(x.shape());
  std::vector<int64_t> idx(perm.size(), 0);
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t src = 0;
    for (size_t i = 0; i < perm.size(); ++i) src += idx[i] * in_strides[perm[i]];
    out.data<float>()[o] = x.data<float>()[src];
    for (size_t d = perm.size(); d-- > 0;) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

TEST_CASE("Transpose matches a naive loop", "[ops][tensor]") {
  Tensor x = testing::random_f32({2, 3, 5, 7}, 1);
  for (std::vector<int64_t> perm : std::vector<std::vector<int64_t>>{
           {0, 2, 1, 3}, {0, 2, 3, 1}, {3, 1, 0, 2}, {0, 1, 2, 3}, {1, 0, 3, 2}}) {
    auto a = make_attrs<TransposeAttrs>([&](auto& t) { t.perm = perm; });
    check_equal(run1("Transpose", {{x}}, a), naive_transpose(x, perm));
  }
  check_equal(run1("Transpose", {{x}}, nullptr), naive_transpose(x, {3, 2, 1, 0}));
  // Large enough for several full and partial copy tiles.
  Tensor big = testing::random_f32({3, 45, 70}, 2);
  for (std::vector<int64_t> perm :
       std::vector<std::vector<int64_t>>{{0, 2, 1}, {2, 1, 0}, {1, 2, 0}}) {
    auto a = make_attrs<TransposeAttrs>([&](auto& t) { t.perm = perm; });
    check_equal(run1("Transpose", {{big}}, a), naive_transpose(big, perm));
  }
  auto bad = make_attrs<TransposeAttrs>([](auto& t) { t.perm = {0, 0, 1}; });
  check_error(infer_error("Transpose", {f32_type({1, 2, 3})}, bad, "t"),
              "Transpose 't': perm [0, 0, 1] is not a permutation of the 3 axes");
}

TEST_CASE("Pad constant, reflect and edge with cropping", "[ops][tensor]") {
  Tensor y = iota(DType::f32, {3, 4});
  auto pad = [](std::vector<int64_t> pads, std::string mode, float value = 0) {
    return make_attrs<PadAttrs>([&](auto& a) {
      a.pads = pads;
      a.mode = mode;
      a.value = value;
    });
  };
  check_equal(run1("Pad", {{y}}, pad({1, -1, 0, 2}, "constant", -1.5f)),
              f32({4, 5}, {-1.5, -1.5, -1.5, -1.5, -1.5, 1, 2,  3,  -1.5, -1.5,
                           5,    6,    7,    -1.5, -1.5, 9, 10, 11, -1.5, -1.5}));
  check_equal(
      run1("Pad", {{y}}, pad({2, 1, 1, 3}, "reflect")),
      f32({6, 8}, {9, 8, 9, 10, 11, 10, 9, 8, 5, 4, 5, 6,  7,  6,  5, 4, 1, 0, 1, 2, 3, 2, 1, 0,
                   5, 4, 5, 6,  7,  6,  5, 4, 9, 8, 9, 10, 11, 10, 9, 8, 5, 4, 5, 6, 7, 6, 5, 4}));
  check_equal(run1("Pad", {{y}}, pad({0, 3, 2, 1}, "edge")),
              f32({5, 8}, {0, 0,  0,  0,  1, 2, 3, 3, 4, 4,  4,  4,  5, 6, 7, 7, 8, 8,  8,  8,
                           9, 10, 11, 11, 8, 8, 8, 8, 9, 10, 11, 11, 8, 8, 8, 8, 9, 10, 11, 11}));
  // Cropping comes first; reflection mirrors the cropped tensor.
  check_equal(run1("Pad", {{y}}, pad({-1, 0, 1, 2}, "reflect")),
              f32({3, 6}, {4, 5, 6, 7, 6, 5, 8, 9, 10, 11, 10, 9, 4, 5, 6, 7, 6, 5}));
  // wrap repeats the (cropped) tensor; axes lists the axes pads is given for.
  auto wrap = make_attrs<PadAttrs>([](auto& a) {
    a.pads = {3, -1, 1, 0};
    a.mode = "wrap";
    a.axes = {1, 0};
  });
  check_equal(run1("Pad", {{y}}, wrap),
              f32({2, 8}, {5, 6, 7, 4, 5, 6, 7, 4, 9, 10, 11, 8, 9, 10, 11, 8}));
  // The fill value is converted to the element type.
  check_equal(run1("Pad", {{iota(DType::i64, {2})}}, pad({1, 1}, "constant", 7.9f)),
              i64({4}, {7, 0, 1, 7}));
}

TEST_CASE("Pad errors", "[ops][tensor][errors]") {
  auto a = make_attrs<PadAttrs>([](auto& p) { p.pads = {1, 1}; });
  check_error(infer_error("Pad", {f32_type({2, 2})}, a, "p"),
              "Pad 'p': pads [1, 1] has 2 entries, expected 2 * rank = 4");
  a = make_attrs<PadAttrs>([](auto& p) {
    p.pads = {0, 1};
    p.mode = "mirror";
  });
  check_error(infer_error("Pad", {f32_type({2})}, a, "p"),
              "unknown mode 'mirror' (expected constant, reflect, edge or wrap)");
  a = make_attrs<PadAttrs>([](auto& p) {
    p.pads = {1, 1, 1};
    p.axes = {0, 1};
  });
  check_error(infer_error("Pad", {f32_type({2, 2})}, a, "p"),
              "pads [1, 1, 1] has 3 entries for the 2 axes [0, 1]");
  a = make_attrs<PadAttrs>([](auto& p) {
    p.pads = {1, 1, 1, 1};
    p.axes = {1, -1};
  });
  check_error(infer_error("Pad", {f32_type({2, 2})}, a, "p"), "axis -1 is listed twice");
  a = make_attrs<PadAttrs>([](auto& p) { p.pads = {-2, -1}; });
  check_error(infer_error("Pad", {f32_type({2})}, a, "p"), "crop 3 elements from axis 0 of size 2");
  // Pads near the int64 limits (a fuzzer finding: -INT64_MIN overflowed) are refused.
  a = make_attrs<PadAttrs>([](auto& p) { p.pads = {std::numeric_limits<int64_t>::min(), 0}; });
  check_error(infer_error("Pad", {f32_type({2})}, a, "p"),
              "crop more than 2^63 - 1 elements from axis 0 of size 2");
  a = make_attrs<PadAttrs>([](auto& p) { p.pads = {-1, -std::numeric_limits<int64_t>::max()}; });
  check_error(infer_error("Pad", {f32_type({2})}, a, "p"),
              "crop more than 2^63 - 1 elements from axis 0 of size 2");
  a = make_attrs<PadAttrs>([](auto& p) { p.pads = {std::numeric_limits<int64_t>::max(), 1}; });
  check_error(infer_error("Pad", {f32_type({2})}, a, "p"),
              "make axis 0 longer than 2^63 - 1 elements");
  a = make_attrs<PadAttrs>([](auto& p) {
    p.pads = {0, -1, 0, 1};
    p.mode = "edge";
  });
  check_error(infer_error("Pad", {f32_type({2, 1})}, a, "p"),
              "mode 'edge' cannot pad axis 1, which is empty");
}

TEST_CASE("Expand broadcasts up in rank and both ways; Tile repeats", "[ops][tensor]") {
  auto expand = [](std::vector<int64_t> s) {
    return make_attrs<ExpandAttrs>([&](auto& a) { a.shape = s; });
  };
  check_equal(
      run1("Expand", {{iota(DType::i64, {3, 1})}}, expand({2, 3, 4})),
      i64({2, 3, 4}, {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));
  check_equal(run1("Expand", {{iota(DType::i64, {2, 1, 3})}}, expand({2, 1})),
              i64({2, 2, 3}, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  check_error(infer_error("Expand", {f32_type({3, 2})}, expand({4}), "e"),
              "Expand 'e': cannot broadcast input 3x2 with shape [4]");

  auto tile = [](std::vector<int64_t> r) {
    return make_attrs<TileAttrs>([&](auto& a) { a.repeats = r; });
  };
  check_equal(
      run1("Tile", {{iota(DType::i64, {2, 3})}}, tile({2, 2})),
      i64({4, 6}, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  CHECK(run1("Tile", {{iota(DType::i64, {2, 3})}}, tile({0, 3})).shape() == Shape{0, 9});
  check_error(infer_error("Tile", {f32_type({2, 3})}, tile({2}), "t"),
              "Tile 't': repeats [2] has 1 entries, but the input 2x3 has rank 2");
  // Found by the ONNX fuzzer (fuzz/regressions-onnx/tile-repeats-overflow.onnx).
  check_error(infer_error("Tile", {f32_type({3, 2})}, tile({INT64_MAX, 1}), "t"),
              "Tile 't': repeats [9223372036854775807, 1] times the input 3x2 overflows axis 0");
}

TEST_CASE("Shape, ConstantOfShape and their attributes", "[ops][tensor]") {
  Tensor x = iota(DType::f32, {2, 3, 5, 7});
  check_equal(run1("Shape", {{x}}, nullptr), i64({4}, {2, 3, 5, 7}));
  auto range = [](int64_t s, int64_t e) {
    return make_attrs<ShapeAttrs>([=](auto& a) {
      a.start = s;
      a.end = e;
    });
  };
  check_equal(run1("Shape", {{x}}, range(-3, -1)), i64({2}, {3, 5}));
  check_equal(run1("Shape", {{x}}, range(-10, 10)), i64({4}, {2, 3, 5, 7}));
  CHECK(run1("Shape", {{x}}, range(3, 1)).shape() == Shape{0});

  auto cos = make_attrs<ConstantOfShapeAttrs>([](auto& a) {
    a.shape = {2, 2};
    a.value = Tensor::from_i64({1}, std::vector<int64_t>{-7});
  });
  check_equal(run1("ConstantOfShape", {}, cos), i64({2, 2}, {-7, -7, -7, -7}));
  auto zeros = make_attrs<ConstantOfShapeAttrs>([](auto& a) { a.shape = {3}; });
  check_equal(run1("ConstantOfShape", {}, zeros), f32({3}, {0, 0, 0}));
  auto bad = make_attrs<ConstantOfShapeAttrs>([](auto& a) {
    a.shape = {3};
    a.value = Tensor::from_i64({2}, std::vector<int64_t>{1, 2});
  });
  check_error(infer_error("ConstantOfShape", {}, bad, "k"),
              "ConstantOfShape 'k': value must have one element, got i64[2]");
}

TEST_CASE("Range for integers and floats", "[ops][tensor]") {
  auto range = [](Tensor s, Tensor l, Tensor d) {
    return run1("Range", {{s, true}, {l, true}, {d, true}}, nullptr);
  };
  check_equal(range(Tensor::scalar_i64(10), Tensor::scalar_i64(-3), Tensor::scalar_i64(-4)),
              i64({4}, {10, 6, 2, -2}));
  check_equal(range(i32({}, {-2}), i32({}, {3}), i32({}, {2})), i32({3}, {-2, 0, 2}));
  CHECK(range(Tensor::scalar_i64(5), Tensor::scalar_i64(5), Tensor::scalar_i64(1)).numel() == 0);
  // Elements accumulate in f32 as in ONNX Runtime: 0.5, 0.5+0.3, ...
  check_equal(range(Tensor::scalar_f32(0.5f), Tensor::scalar_f32(3.1f), Tensor::scalar_f32(0.3f)),
              f32({9}, {0.5f, 0.800000011920929f, 1.100000023841858f, 1.4000000953674316f,
                        1.7000000476837158f, 2.0f, 2.299999952316284f, 2.5999999046325684f,
                        2.8999998569488525f}));
}

TEST_CASE("Range errors", "[ops][tensor][errors]") {
  auto r = run_op(
      "Range",
      {{Tensor::scalar_i64(0), true}, {Tensor::scalar_i64(3), true}, {Tensor::scalar_i64(0), true}},
      nullptr, 1, "rg");
  REQUIRE(!r.ok());
  check_error(r.status(), "Range 'rg': delta is 0");
  r = run_op(
      "Range",
      {{Tensor::scalar_i64(0), true}, {Tensor::scalar_f32(3), true}, {Tensor::scalar_i64(1), true}},
      nullptr, 1, "rg");
  REQUIRE(!r.ok());
  check_error(r.status(), "limit has dtype f32, but start has i64");
}

std::shared_ptr<const OpAttrs> resize(std::string mode, std::string coord,
                                      std::vector<float> scales, std::vector<int64_t> sizes,
                                      std::string nearest = "round_prefer_floor") {
  return make_attrs<ResizeAttrs>([&](auto& a) {
    a.mode = mode;
    a.coordinate_transformation_mode = coord;
    a.nearest_mode = nearest;
    a.scales = scales;
    a.sizes = sizes;
  });
}

// Expected values below are ONNX Runtime 1.31's outputs for the same inputs.
TEST_CASE("Resize nearest and linear", "[ops][tensor]") {
  Tensor a = iota(DType::f32, {1, 1, 2, 3});
  check_equal(
      run1("Resize", {{a}}, resize("nearest", "asymmetric", {1, 1, 2, 2}, {}, "floor")),
      f32({1, 1, 4, 6}, {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 3, 3, 4, 4, 5, 5}));
  check_close(run1("Resize", {{a}}, resize("linear", "align_corners", {}, {1, 1, 3, 5})),
              f32({1, 1, 3, 5}, {0, 0.5, 1, 1.5, 2, 1.5, 2, 2.5, 3, 3.5, 3, 3.5, 4, 4.5, 5}));
  Tensor b = iota(DType::f32, {1, 1, 4, 4});
  check_close(run1("Resize", {{b}}, resize("linear", "half_pixel", {1, 1, 1.5f, 0.5f}, {})),
              f32({1, 1, 6, 2}, {0.5f, 2.5f, 2.5f, 4.5f, 5.166667f, 7.166667f, 7.833333f, 9.833333f,
                                 10.5f, 12.5f, 12.5f, 14.5f}));
  check_equal(
      run1("Resize", {{b}}, resize("nearest", "half_pixel", {}, {1, 1, 3, 6}, "round_prefer_ceil")),
      f32({1, 1, 3, 6}, {0, 1, 1, 2, 3, 3, 8, 9, 9, 10, 11, 11, 12, 13, 13, 14, 15, 15}));
  // Integer linear resizing truncates toward zero like ONNX Runtime.
  Tensor c = make(DType::i32, {1, 1, 2, 3}, std::vector<int32_t>{0, 7, 14, 21, 28, 35});
  check_equal(run1("Resize", {{c}}, resize("linear", "half_pixel", {1, 1, 2, 1.5f}, {})),
              i32({1, 1, 4, 4}, {0, 3, 8, 12, 5, 8, 13, 18, 15, 19, 23, 28, 21, 24, 29, 33}));
}

// Expected values: ONNX's node tests test_resize_downsample_scales_{linear,cubic}_antialias.
TEST_CASE("Resize antialias widens the filter when downsampling", "[ops][tensor]") {
  Tensor x = iota(DType::f32, {1, 1, 4, 4});  // 0..15; the ONNX tests have 1..16
  for (const char* mode : {"linear", "cubic"}) {
    auto attrs = make_attrs<ResizeAttrs>([&](auto& a) {
      a.mode = mode;
      a.antialias = 1;
      a.scales = {1, 1, 0.6f, 0.6f};
    });
    Tensor y = run1("Resize", {{x}}, attrs);
    const std::vector<float> onnx = std::string(mode) == "linear"
                                        ? std::vector<float>{2.875f, 4.5f, 9.375f, 11.f}
                                        : std::vector<float>{2.5180721f, 4.2858863f, 9.5893288f,
                                                             11.357142f};
    std::vector<float> minus_one;
    for (float v : onnx) minus_one.push_back(v - 1.f);  // normalised weights: shift-invariant
    check_close(y, f32({1, 1, 2, 2}, minus_one));
  }
}

TEST_CASE("Resize cubic and tf_crop_and_resize", "[ops][tensor]") {
  Tensor c = iota(DType::f32, {1, 1, 3, 3});
  check_close(
      run1("Resize", {{c}}, resize("cubic", "half_pixel", {1, 1, 2, 2}, {})),
      f32({1, 1, 6, 6},
          {-0.421875f, -0.125f,   0.3515625f, 1.015625f, 1.492188f, 1.789062f, 0.46875f,  0.765625f,
           1.242188f,  1.90625f,  2.382812f,  2.679688f, 1.898438f, 2.195312f, 2.671875f, 3.335938f,
           3.8125f,    4.109375f, 3.890625f,  4.1875f,   4.664062f, 5.328125f, 5.804688f, 6.101562f,
           5.320312f,  5.617188f, 6.09375f,   6.757812f, 7.234375f, 7.53125f,  6.210938f, 6.507812f,
           6.984375f,  7.648438f, 8.125f,     8.421875f}));
  auto excl = make_attrs<ResizeAttrs>([](auto& a) {
    a.mode = "cubic";
    a.cubic_coeff_a = -0.5f;
    a.exclude_outside = 1;
    a.sizes = {1, 1, 2, 4};
  });
  check_close(run1("Resize", {{c}}, excl),
              f32({1, 1, 2, 4}, {0.4514108f, 1.060245f, 1.947055f, 2.555889f, 5.444111f, 6.052946f,
                                 6.939755f, 7.548589f}));
  auto crop = make_attrs<ResizeAttrs>([](auto& a) {
    a.mode = "linear";
    a.coordinate_transformation_mode = "tf_crop_and_resize";
    a.extrapolation_value = -1.f;
    a.roi = {0, 0, 0.2f, -0.5f, 1, 1, 0.8f, 1.5f};
    a.sizes = {1, 1, 3, 3};
  });
  check_close(run1("Resize", {{iota(DType::f32, {1, 1, 4, 4})}}, crop),
              f32({1, 1, 3, 3}, {-1, 3.9f, -1, -1, 7.5f, -1, -1, 11.1f, -1}));
}

TEST_CASE("Resize errors", "[ops][tensor][errors]") {
  TensorType t = f32_type({1, 1, 2, 2});
  check_error(
      infer_error("Resize", {t}, resize("nearest", "half_pixel", {1, 1, 2, 2}, {1, 1, 4, 4}), "rs"),
      "Resize 'rs': exactly one of scales and sizes must be given (4 scales, 4 sizes)");
  check_error(infer_error("Resize", {t}, resize("nearest", "half_pixel", {2, 2}, {}), "rs"),
              "scales has 2 entries, but the input 1x1x2x2 has rank 4");
  check_error(infer_error("Resize", {t}, resize("area", "half_pixel", {1, 1, 2, 2}, {}), "rs"),
              "unknown mode 'area'");
  check_error(infer_error("Resize", {t}, resize("nearest", "bogus", {1, 1, 2, 2}, {}), "rs"),
              "unknown coordinate_transformation_mode 'bogus'");
  check_error(infer_error("Resize", {t}, resize("nearest", "half_pixel", {1, 1, 0, 2}, {}), "rs"),
              "scale 0 for axis 2 must be > 0");
  auto axes = make_attrs<ResizeAttrs>([](auto& a) {
    a.sizes = {3, 3, 3};
    a.axes = {2, 3};
  });
  check_error(infer_error("Resize", {t}, axes, "rs"), "sizes has 3 entries, but axes [2, 3] has 2");
  axes = make_attrs<ResizeAttrs>([](auto& a) {
    a.scales = {2, 2};
    a.axes = {3, -1};
  });
  check_error(infer_error("Resize", {t}, axes, "rs"), "axis -1 is listed twice");
  check_error(infer_error("Resize", {{DType::boolean, {2, 2}}},
                          resize("linear", "half_pixel", {2, 2}, {}), "rs"),
              "mode 'linear' cannot interpolate bool");
}

// Every data-movement operator copies elements bit for bit, so on any dtype its result is the f32
// result converted to that dtype.
TEST_CASE("Data movement works on every dtype", "[ops][tensor]") {
  struct OpCase {
    std::string op;
    std::shared_ptr<const OpAttrs> attrs;
    bool two_inputs = false;  // Concat with itself, Gather with fixed indices
  };
  const std::vector<OpCase> ops = {
      {"Transpose", make_attrs<TransposeAttrs>([](auto& a) {
         a.perm = {2, 0, 1};
       })},
      {"Slice", make_attrs<SliceAttrs>([](auto& a) {
         a.starts = {-1, 1};
         a.ends = {kMin, 3};
         a.axes = {2, 1};
         a.steps = {-2, 1};
       })},
      {"Concat", make_attrs<ConcatAttrs>([](auto& a) { a.axis = 1; }), true},
      {"Gather", make_attrs<GatherAttrs>([](auto& a) { a.axis = 2; }), true},
      {"Pad", make_attrs<PadAttrs>([](auto& a) {
         a.pads = {0, 1, 2, 1, -1, 1};
         a.mode = "reflect";
       })},
      {"Pad", make_attrs<PadAttrs>([](auto& a) {
         a.pads = {1, 0, -1, 0, 2, 1};
         a.value = 1;
       })},
      {"Tile", make_attrs<TileAttrs>([](auto& a) {
         a.repeats = {2, 1, 2};
       })},
      {"Expand", make_attrs<ExpandAttrs>([](auto& a) {
         a.shape = {2, 1, 3, 1};
       })},
      {"Reshape", make_attrs<ReshapeAttrs>([](auto& a) {
         a.shape = {0, -1};
       })},
      {"Resize", resize("nearest", "asymmetric", {1, 1.5f, 0.7f}, {})},
  };
  for (DType t :
       {DType::f32, DType::f16, DType::bf16, DType::i8, DType::i32, DType::i64, DType::boolean}) {
    const Tensor x = iota(t, {2, 3, 4});
    for (const OpCase& c : ops) {
      INFO(c.op << " on " << dtype_name(t));
      std::vector<Input> typed{{x}}, reference{{x.cast(DType::f32)}};
      if (c.two_inputs) {
        if (c.op == "Concat") {
          typed.push_back({x});
          reference.push_back(reference[0]);
        } else {
          typed.push_back({i64({2}, {3, -4})});
          reference.push_back({i64({2}, {3, -4})});
        }
      }
      Tensor got = run1(c.op, typed, c.attrs);
      Tensor expected = run1(c.op, reference, c.attrs).cast(t);
      CHECK(got.identical(expected));
    }
  }
}

TEST_CASE("Tensor operator definitions", "[ops][tensor]") {
  const OpRegistry& r = ctx().ops();
  for (const char* name : {"Concat", "Split", "Slice", "Gather", "Reshape", "Flatten", "Transpose",
                           "Squeeze", "Unsqueeze", "Pad", "Expand", "Tile", "Resize"}) {
    INFO(name);
    REQUIRE(r.find(name));
    CHECK(r.find(name)->fusion == FusionKind::injective);
  }
  for (const char* name : {"Shape", "ConstantOfShape", "Range"}) {
    INFO(name);
    REQUIRE(r.find(name));
    CHECK(r.find(name)->fusion == FusionKind::opaque);
  }
  CHECK(r.find("Shape")->shape_only);
  CHECK_FALSE(r.find("Transpose")->shape_only);
  // Range's bounds may be computed at run time (its length is then dynamic); ConstantOfShape's
  // shape may come from an input (its attribute input, OpDef::attr_inputs).
  CHECK(r.find("Range")->constant_inputs.empty());
  CHECK(r.find("Concat")->max_inputs == -1);
  CHECK(r.find("ConstantOfShape")->first_attr_input == 0);
  CHECK(r.find("ConstantOfShape")->max_inputs == 1);
}

// Operators whose output shape follows an input's value: dynamic when the value comes at run
// time, exact (and checked) when it is a constant.
TEST_CASE("Sizes given as inputs: window functions, CenterCropPad, MaxUnpool", "[ops][tensor]") {
  auto periodic = make_attrs<SignalWindowAttrs>([](auto&) {});
  check_close(run1("HannWindow", {{Tensor::scalar_i64(4)}}, periodic),
              f32({4}, {0.f, 0.5f, 1.f, 0.5f}));
  check_close(run1("HannWindow", {{Tensor::scalar_i64(4), true}}, periodic),
              f32({4}, {0.f, 0.5f, 1.f, 0.5f}));
  check_error(run_op("HannWindow", {{Tensor::scalar_i64(-3), true}}, periodic, 1, "w").status(),
              "HannWindow 'w': size is -3");
  check_error(run_op("HannWindow", {{Tensor::scalar_i64(-3)}}, periodic, 1, "w").status(),
              "HannWindow 'w': size is -3");

  auto all_axes = make_attrs<CenterCropPadAttrs>([](auto&) {});
  check_equal(run1("CenterCropPad", {{iota(DType::i32, {3, 4})}, {i64({2}, {1, 6})}}, all_axes),
              i32({1, 6}, {0, 4, 5, 6, 7, 0}));

  auto unpool = make_attrs<MaxUnpoolAttrs>([](auto& a) {
    a.kernel_shape = {2};
    a.strides = {2};
  });
  check_equal(run1("MaxUnpool", {{f32({1, 1, 2}, {5, 7})}, {i64({1, 1, 2}, {1, 2})}}, unpool),
              f32({1, 1, 4}, {0, 5, 7, 0}));
  check_error(
      run_op("MaxUnpool", {{f32({1, 1, 2}, {5, 7})}, {i64({1, 1, 2}, {1, 4})}}, unpool, 1, "u")
          .status(),
      "MaxUnpool 'u': index 4 (element 1 of I) is outside the unpooled 4 elements");
}

}  // namespace
}  // namespace collage
