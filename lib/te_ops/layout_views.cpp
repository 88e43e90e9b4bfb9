// Blocked-layout views of tensor expressions.
#include "te_ops/layout_views.h"

#include <cassert>

namespace collage::te_ops {

Shape stored_shape(const Shape& logical, const Layout& layout) {
  if (layout.plain()) return logical;
  assert(logical.size() >= 3 && logical[1] % layout.c_block == 0);
  Shape s = logical;
  s[1] /= layout.c_block;
  s.push_back(layout.c_block);
  return s;
}

te::Tensor logical_view(const te::Tensor& stored, const Layout& layout) {
  const int64_t b = layout.c_block;
  Shape logical(stored.shape().begin(), stored.shape().end() - 1);
  logical[1] *= b;
  return te::compute(
      logical,
      [&](const std::vector<te::Var>& i) {
        std::vector<te::Expr> at(i.begin(), i.end());
        at[1] = te::floordiv(i[1], b);
        at.push_back(te::floormod(i[1], b));
        return stored(at);
      },
      stored.name() + ".logical", kLayoutViewTag);
}

te::Tensor stored_view(const te::Tensor& logical, const Layout& layout, std::string name) {
  const int64_t b = layout.c_block;
  return te::compute(
      stored_shape(logical.shape(), layout),
      [&](const std::vector<te::Var>& i) {
        std::vector<te::Expr> at(i.begin(), i.end() - 1);
        at[1] = i[1] * b + i.back();
        return logical(at);
      },
      std::move(name), kStoredViewTag);
}

te::Tensor stored_source(const te::Tensor& t) {
  if (!t.defined() || t.op_kind() != te::OpKind::compute || t->tag != kStoredViewTag) return {};
  return te::input_tensors(t)[0];
}

}  // namespace collage::te_ops
