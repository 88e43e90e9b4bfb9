// concat_blocked: Concat of channel-blocked values in their stored order.
#include "te_ops/concat_blocked.h"

#include "te_ops/layout_views.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {

te::Tensor concat_blocked(const std::vector<te::Tensor>& parts, DType dtype,
                          const std::string& name) {
  std::vector<te::Tensor> stored;
  int64_t block = 0;
  for (const te::Tensor& p : parts) {
    if (p.op_kind() != te::OpKind::compute || p->tag != kLayoutViewTag) return {};
    const te::Tensor s = te::input_tensors(p).at(0);
    if (s.dtype() != dtype || s.ndim() < 4) return {};
    if (block != 0 && s.shape().back() != block) return {};
    block = s.shape().back();
    stored.push_back(s);
  }
  if (stored.empty()) return {};
  // Offsets in blocks.
  std::vector<int64_t> offsets;
  Shape shape = stored[0].shape();
  shape[1] = 0;
  for (const te::Tensor& s : stored) {
    offsets.push_back(shape[1]);
    shape[1] += s.shape()[1];
  }
  offsets.push_back(shape[1]);
  const te::Tensor blocked = te::compute(
      shape,
      [&](const std::vector<te::Var>& i) {
        te::Expr v;
        for (size_t p = stored.size(); p-- > 0;) {
          std::vector<te::Expr> idx(i.begin(), i.end());
          idx[1] = stored.size() == 1 ? idx[1] - offsets[p]
                                      : clamp_index(idx[1] - offsets[p], stored[p].shape()[1]);
          const te::Expr load = stored[p](idx);
          v = v.defined() ? te::select(i[1] < offsets[p + 1], load, v) : load;
        }
        return v;
      },
      name + ".blocked");
  return logical_view(blocked, Layout::channel_blocked(static_cast<int32_t>(block)));
}

}  // namespace collage::te_ops
