// Loop-nest construction for one stage: loops in leaf order with their kinds, tail guards at the
// innermost loop they depend on, the reduction's init nest before its first reduction loop, and
// the stages attached at each loop.
#include <set>

#include "arith.h"
#include "core/str_cat.h"
#include "lower_state.h"

namespace collage::te::detail {

namespace {

struct Guard {
  Expr cond;
  bool data_axis;  // applies to the init nest too
  int level;       // index of the innermost leaf loop it uses, -1 for none
};

// Root axes whose iteration space is padded by a split that does not divide its parent.
std::set<const IterVarNode*> padded_roots(const StageData& s, const StageInfo& info) {
  // For every iteration axis, the root axes it derives from.
  std::map<const IterVarNode*, std::set<const IterVarNode*>> roots;
  for (const IterVar& r : s.root_axes()) roots[r.get()] = {r.get()};
  std::set<const IterVarNode*> padded;
  for (const Relation& rel : s.relations) {
    if (const auto* sp = std::get_if<SplitRel>(&rel)) {
      const auto& from = roots[sp->parent.get()];
      roots[sp->outer.get()] = from;
      roots[sp->inner.get()] = from;
      int64_t e = info.iv_extent.at(sp->parent.get());
      int64_t d = sp->factor > 0 ? sp->factor : sp->nparts;
      if (e % d != 0) padded.insert(from.begin(), from.end());
    } else {
      const auto& f = std::get<FuseRel>(rel);
      std::set<const IterVarNode*> both = roots[f.outer.get()];
      both.insert(roots[f.inner.get()].begin(), roots[f.inner.get()].end());
      roots[f.fused.get()] = both;
    }
  }
  return padded;
}

int innermost_level(const Expr& cond, const std::vector<IterVar>& leaf) {
  for (int i = static_cast<int>(leaf.size()) - 1; i >= 0; --i) {
    if (uses_var(cond, leaf[i].var().get())) return i;
  }
  return -1;
}

Stmt wrap_guards(const std::vector<Guard>& guards, int level, bool init_nest, Stmt body) {
  Expr cond;
  for (const Guard& g : guards) {
    if (g.level != level || (init_nest && !g.data_axis)) continue;
    cond = cond.defined() ? logical_and(cond, g.cond) : g.cond;
  }
  return cond.defined() ? make_if(cond, std::move(body)) : body;
}

}  // namespace

absl::StatusOr<Stmt> build_stage_nest(LowerState& st, int index) {
  StageInfo& info = st.stages[index];
  const StageData& s = *info.data;
  const std::vector<IterVar>& leaf = s.leaf;
  const int n = static_cast<int>(leaf.size());

  // Global and local (buffer) coordinates of the element being computed.
  std::vector<Expr> global, local;
  for (size_t d = 0; d < s.axis.size(); ++d) {
    Expr g = info.root_value.at(s.axis[d].var().get());
    global.push_back(g);
    local.push_back(info.is_param ? g : simplify(g - info.min[d]));
  }

  // Guards: padded splits, and attached regions that may stick out of the tensor.
  std::vector<Guard> guards;
  std::set<const IterVarNode*> padded = padded_roots(s, info);
  VarRanges ranges = st.enclosing_ranges(index);
  for (size_t d = 0; d < s.axis.size(); ++d) {
    Expr lv = simplify(global[d] - info.min[d]);
    if (padded.count(s.axis[d].get())) {
      guards.push_back({lv < make_int(DType::i64, info.extent[d]), true, 0});
    }
  }
  // A region computed at a consumer's loop lies inside the tensor (bounds inference shifts it
  // there) except for stages stored in an argument buffer, which are guarded.
  if (s.attach == AttachKind::at && info.is_param) {
    for (size_t d = 0; d < s.axis.size(); ++d) {
      const Expr shape = make_int(DType::i64, s.tensor.shape()[d]);
      const Expr zero = make_int(DType::i64, 0);
      guards.push_back({global[d] < shape, true, 0});
      guards.push_back({global[d] >= zero, true, 0});
    }
  }
  for (const IterVar& r : s.reduce_axis) {
    if (padded.count(r.get())) {
      Expr rv = simplify(info.root_value.at(r.var().get()) - make_int(DType::i64, r.dom().min));
      guards.push_back({rv < make_int(DType::i64, r.dom().extent), false, 0});
    }
  }
  std::vector<Guard> kept;
  for (Guard& g : guards) {
    g.cond = simplify(g.cond, ranges);
    if (const auto* imm = g.cond.as<IntImmNode>(); imm && imm->value) continue;
    g.level = innermost_level(g.cond, leaf);
    kept.push_back(g);
  }
  guards = std::move(kept);

  // The statements at the innermost point.
  const auto* reduce = info.body.as<ReduceNode>();
  Stmt main_store, init_store;
  if (reduce) {
    Expr src = substitute(reduce->source, info.root_value);
    Expr init = substitute(reduce->init, info.root_value);
    init_store = make_store(info.buffer, local, init);
    main_store = make_store(info.buffer, local, reduce_step(reduce->op, s.tensor(global), src));
  } else {
    main_store = make_store(info.buffer, local, substitute(info.body, info.root_value));
  }

  auto make_loop = [&](const IterVar& iv, Stmt body) {
    IterAttr a = s.attr(iv);
    return make_for(iv.var(), make_int(DType::i64, 0),
                    make_int(DType::i64, info.iv_extent.at(iv.get())), a.kind, std::move(body),
                    a.thread_tag);
  };

  // The reduction's init nest runs before the first reduction loop, over the data-parallel loops
  // that come after it.
  int first_reduce = n;
  for (int i = 0; i < n; ++i) {
    if (leaf[i].kind() == IterKind::reduce) {
      first_reduce = i;
      break;
    }
  }
  Stmt init_nest;
  if (reduce) {
    init_nest = init_store;
    for (int i = n - 1; i > first_reduce; --i) {
      if (leaf[i].kind() != IterKind::data_par) continue;
      init_nest = make_loop(leaf[i], wrap_guards(guards, i, true, init_nest));
    }
    if (first_reduce == n) main_store = make_seq({init_nest, main_store});
  }

  Stmt body = main_store;
  for (int i = n - 1; i >= 0; --i) {
    // Stages attached at this loop are computed first in its body; their storage spans the body.
    const IterVar& iv = leaf[i];
    for (auto it = info.attached.rbegin(); it != info.attached.rend(); ++it) {
      const StageInfo& a = st.stages[*it];
      if (!a.data->attach_axis.same_as(iv)) continue;
      absl::StatusOr<Stmt> nest = build_stage_nest(st, *it);
      if (!nest.ok()) return nest.status();
      body = make_seq({*nest, body});
      if (!a.is_param) body = make_allocate(a.buffer, body);
    }
    body = wrap_guards(guards, i, false, body);
    body = make_loop(iv, body);
    if (reduce && i == first_reduce) body = make_seq({init_nest, body});
  }
  return wrap_guards(guards, -1, false, body);
}

}  // namespace collage::te::detail
