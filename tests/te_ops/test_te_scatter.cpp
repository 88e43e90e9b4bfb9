// ScatterElements' and ScatterND's TE computes against the reference: duplicate and negative
// indices, every reduction (none: the last update wins; add, mul, max, min), and indices smaller
// than the data.
#include <catch2/catch.hpp>

#include "collage/ops/indexing.h"
#include "common/backend_check.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

namespace {

// i64 indices of `shape` in [-dim, dim), repeating (duplicates) every `period` elements.
Tensor indices(const Shape& shape, int64_t dim, int64_t period) {
  Tensor x(DType::i64, shape);
  for (int64_t i = 0; i < x.numel(); ++i)
    x.data<int64_t>()[i] = ((i % period) * 5 + 1) % (2 * dim) - dim;
  return x;
}

// ScatterND index rows of `shape` (last axis m) addressing data of `dims`, repeating.
Tensor nd_rows(const Shape& shape, const Shape& dims, int64_t period) {
  Tensor x(DType::i64, shape);
  const int64_t m = shape.back();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t row = (i / m) % period, d = dims[i % m];
    x.data<int64_t>()[i] = (row * 3 + i % m) % (2 * d) - d;
  }
  return x;
}

std::shared_ptr<const OpAttrs> scatter_attrs(int64_t axis, const char* reduction) {
  return make_attrs<ScatterAttrs>([&](auto& a) {
    a.axis = axis;
    a.reduction = reduction;
  });
}

}  // namespace

TEST_CASE("te_ops: ScatterElements matches the reference", "[te_ops]") {
  Context ctx;
  struct Case {
    Shape data, idx;
    int64_t axis;
  };
  const std::vector<Case> cases = {
      {{4, 6}, {3, 6}, 0}, {{4, 6}, {2, 5}, 1}, {{3, 5, 4}, {3, 2, 4}, -2}};
  for (const Case& c : cases)
    for (const char* reduction : {"none", "add", "mul", "max", "min"})
      for (DType t : {DType::f32, DType::i64}) {
        INFO(shape_to_string(c.data) << " " << shape_to_string(c.idx) << " axis " << c.axis << " "
                                     << reduction << " " << dtype_name(t));
        const int64_t axis = c.axis < 0 ? c.axis + static_cast<int64_t>(c.data.size()) : c.axis;
        Graph g =
            single_op_graph(ctx, "ScatterElements", {{t, c.data}, {DType::i64, c.idx}, {t, c.idx}},
                            scatter_attrs(c.axis, reduction));
        GroupCheck check;
        check.claim = true;
        check.inputs = {random_tensor({t, c.data}, 41), indices(c.idx, c.data[axis], 3),
                        random_tensor({t, c.idx}, 42)};
        check_group(native_backend(), g, check);
      }
}

TEST_CASE("te_ops: ScatterND matches the reference", "[te_ops]") {
  Context ctx;
  struct Case {
    Shape data, idx, updates;
  };
  const std::vector<Case> cases = {{{5, 4, 3}, {2, 3, 1}, {2, 3, 4, 3}},  // rows of slices
                                   {{5, 4, 3}, {6, 2}, {6, 3}},
                                   {{5, 4}, {7, 2}, {7}},  // single elements, duplicates
                                   {{6}, {1}, {}}};
  for (const Case& c : cases)
    for (const char* reduction : {"none", "add", "mul", "max", "min"})
      for (DType t : {DType::f32, DType::i32}) {
        INFO(shape_to_string(c.data)
             << " " << shape_to_string(c.idx) << " " << reduction << " " << dtype_name(t));
        Graph g =
            single_op_graph(ctx, "ScatterND", {{t, c.data}, {DType::i64, c.idx}, {t, c.updates}},
                            scatter_attrs(0, reduction));
        GroupCheck check;
        check.claim = true;
        check.inputs = {random_tensor({t, c.data}, 43), nd_rows(c.idx, c.data, 4),
                        random_tensor({t, c.updates}, 44)};
        check_group(native_backend(), g, check);
      }
}

TEST_CASE("te_ops: TensorScatter writes each batch's window, wrapping in circular mode",
          "[te_ops]") {
  Context ctx;
  struct Case {
    Shape cache, update;
    int64_t axis;
    std::string mode;
    std::vector<int64_t> starts;  // empty: no write_indices
  };
  const std::vector<Case> cases = {
      {{2, 3, 8, 4}, {2, 3, 2, 4}, -2, "linear", {1, 6}},
      {{2, 3, 8, 4}, {2, 3, 3, 4}, 2, "circular", {6, 7}},
      {{3, 5, 6}, {3, 5, 6}, 2, "circular", {0, 2, 5}},
      {{2, 7, 3}, {2, 4, 3}, 1, "linear", {}},
  };
  for (const Case& c : cases) {
    INFO("TensorScatter " << shape_to_string(c.update) << " into " << shape_to_string(c.cache)
                          << " " << c.mode);
    auto attrs = make_attrs<TensorScatterAttrs>([&](auto& a) {
      a.axis = c.axis;
      a.mode = c.mode;
    });
    std::vector<TensorType> types = {{DType::f32, c.cache}, {DType::f32, c.update}};
    std::vector<Tensor> constants;
    if (!c.starts.empty()) {
      types.push_back({DType::i64, {c.cache[0]}});
      constants = {Tensor(), Tensor(), Tensor::from_i64({c.cache[0]}, c.starts)};
    }
    check_group(native_backend(), single_op_graph(ctx, "TensorScatter", types, attrs, constants));
  }
}
