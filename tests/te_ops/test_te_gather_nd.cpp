// GatherND's TE compute against the reference: whole slices, single elements, batch axes and
// negative indices, on f32, i64 and u32 data.
#include <catch2/catch.hpp>

#include "collage/ops/indexing.h"
#include "common/backend_check.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

namespace {

// Indices of `shape` whose entry k along the last axis is in [-dims[b + k], dims[b + k]).
Tensor index_rows(const Shape& shape, const Shape& dims, int64_t b) {
  Tensor x(DType::i64, shape);
  const int64_t m = shape.back();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t d = dims[b + i % m];
    const int64_t v = (i * 7 + 3) % (2 * d) - d;  // walks negative and positive
    x.data<int64_t>()[i] = v;
  }
  return x;
}

}  // namespace

TEST_CASE("te_ops: GatherND matches the reference", "[te_ops]") {
  Context ctx;
  struct Case {
    Shape data, indices;
    int64_t batch_dims;
  };
  const std::vector<Case> cases = {{{4, 5, 6}, {3, 1}, 0},     // whole slices
                                   {{4, 5, 6}, {2, 7, 3}, 0},  // single elements
                                   {{4, 5, 6}, {4, 2}, 1},  // one batch axis, rows of rank 1 slices
                                   {{2, 3, 5, 6}, {2, 3, 4, 1}, 2}};
  for (const Case& c : cases)
    for (DType t : {DType::f32, DType::i64, DType::u32}) {
      INFO(shape_to_string(c.data) << " " << shape_to_string(c.indices) << " batch_dims "
                                   << c.batch_dims << " " << dtype_name(t));
      auto attrs = make_attrs<GatherNDAttrs>([&](auto& a) { a.batch_dims = c.batch_dims; });
      Graph g = single_op_graph(ctx, "GatherND", {{t, c.data}, {DType::i64, c.indices}}, attrs);
      GroupCheck check;
      check.inputs = {random_tensor({t, c.data}, 31), index_rows(c.indices, c.data, c.batch_dims)};
      check.claim = true;
      check_group(native_backend(), g, check);
    }
}
