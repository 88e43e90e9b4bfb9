// Inlining and bounds inference: which region of each stage must be computed where it is
// attached, the extents of every loop, and the value of each root axis in terms of the loops.
#include <algorithm>
#include <set>

#include "arith.h"
#include "core/str_cat.h"
#include "lower_state.h"

namespace collage::te::detail {

absl::Status LowerState::error(const std::string& message) const {
  return absl::InvalidArgumentError(str_cat("lower '", func_name, "': ", message));
}

VarRanges LowerState::enclosing_ranges(int index) const {
  VarRanges ranges;
  for (int k = index; k >= 0;) {
    const StageInfo& info = stages[k];
    for (const IterVar& l : info.data->leaf) {
      auto it = info.iv_extent.find(l.get());
      if (it != info.iv_extent.end()) ranges[l.var().get()] = Range{0, it->second};
    }
    k = info.data->attach == AttachKind::at ? index_of(info.data->attach_stage.get()) : -1;
  }
  return ranges;
}

namespace {

class Inliner : public ExprMutator {
 public:
  explicit Inliner(LowerState& st) : st_(st) {}

  // The body of stage k with every inlined read substituted (memoised).
  Expr inlined_body(int k) {
    auto it = memo_.find(k);
    if (it != memo_.end()) return it->second;
    Expr b = mutate(st_.sched->stages[k].body);
    memo_[k] = b;
    return b;
  }

 protected:
  Expr mutate_ProducerLoad(const ProducerLoadNode& n, const Expr& e) override {
    Expr rebuilt = ExprMutator::mutate_ProducerLoad(n, e);
    const auto* load = rebuilt.as<ProducerLoadNode>();
    int k = st_.index_of(n.producer.get());
    if (k < 0 || st_.sched->stages[k].attach != AttachKind::inline_ || st_.stages[k].is_input)
      return rebuilt;
    const StageData& s = st_.sched->stages[k];
    VarMap m;
    for (size_t d = 0; d < s.axis.size() && d < load->indices.size(); ++d) {
      m[s.axis[d].var().get()] = load->indices[d];
    }
    return substitute(inlined_body(k), m);
  }

 private:
  LowerState& st_;
  std::map<int, Expr> memo_;
};

class ReadFinder : public ExprVisitor {
 public:
  std::vector<Tensor> reads;
  // Index lists of the reads of `target` (when set).
  const TensorNode* target = nullptr;
  std::vector<std::vector<Expr>> accesses;

 protected:
  void visit_ProducerLoad(const ProducerLoadNode& n, const Expr& e) override {
    bool seen = false;
    for (const Tensor& t : reads) seen |= t.same_as(n.producer);
    if (!seen) reads.push_back(n.producer);
    if (n.producer.get() == target) accesses.push_back(n.indices);
    ExprVisitor::visit_ProducerLoad(n, e);
  }
};

// Every read of a tensor in an expression.
class ReadCollector : public ExprVisitor {
 public:
  std::vector<const ProducerLoadNode*> loads;

 protected:
  void visit_ProducerLoad(const ProducerLoadNode& n, const Expr& e) override {
    loads.push_back(&n);
    ExprVisitor::visit_ProducerLoad(n, e);
  }
};

void mark_needed(LowerState& st, Inliner& inl, int k) {
  StageInfo& info = st.stages[k];
  if (info.needed) return;
  info.needed = true;
  info.data = &st.sched->stages[k];
  if (info.is_input || info.data->is_placeholder()) return;
  info.body = inl.inlined_body(k);
  ReadFinder f;
  f.visit(info.body);
  info.reads = f.reads;
  for (const Tensor& t : info.reads) {
    int j = st.index_of(t.get());
    if (j >= 0) mark_needed(st, inl, j);
  }
}

// Extents of every iteration axis of stage s from the extents of its root axes.
void compute_extents(const StageData& s, StageInfo& info) {
  info.iv_extent.clear();
  for (size_t d = 0; d < s.axis.size(); ++d) info.iv_extent[s.axis[d].get()] = info.extent[d];
  for (const IterVar& r : s.reduce_axis) info.iv_extent[r.get()] = r.dom().extent;
  for (const Relation& rel : s.relations) {
    if (const auto* sp = std::get_if<SplitRel>(&rel)) {
      int64_t e = info.iv_extent[sp->parent.get()];
      if (sp->factor > 0) {
        info.iv_extent[sp->inner.get()] = sp->factor;
        info.iv_extent[sp->outer.get()] = (e + sp->factor - 1) / sp->factor;
      } else {
        int64_t in = (e + sp->nparts - 1) / sp->nparts;
        info.iv_extent[sp->inner.get()] = in;
        info.iv_extent[sp->outer.get()] = sp->nparts;
      }
    } else {
      const auto& f = std::get<FuseRel>(rel);
      info.iv_extent[f.fused.get()] = info.iv_extent[f.outer.get()] * info.iv_extent[f.inner.get()];
    }
  }
}

// Root axis values (global coordinates) in terms of the leaf loop variables.
void compute_root_values(const StageData& s, StageInfo& info) {
  std::map<const IterVarNode*, Expr> val;
  for (const IterVar& l : s.leaf) val[l.get()] = l.var();
  for (auto it = s.relations.rbegin(); it != s.relations.rend(); ++it) {
    if (const auto* sp = std::get_if<SplitRel>(&*it)) {
      int64_t in = info.iv_extent[sp->inner.get()];
      val[sp->parent.get()] =
          val[sp->outer.get()] * make_int(DType::i64, in) + val[sp->inner.get()];
    } else {
      const auto& f = std::get<FuseRel>(*it);
      Expr in_ext = make_int(DType::i64, info.iv_extent[f.inner.get()]);
      val[f.outer.get()] = floordiv(val[f.fused.get()], in_ext);
      val[f.inner.get()] = floormod(val[f.fused.get()], in_ext);
    }
  }
  info.root_value.clear();
  for (size_t d = 0; d < s.axis.size(); ++d) {
    info.root_value[s.axis[d].var().get()] = simplify(info.min[d] + val[s.axis[d].get()]);
  }
  for (const IterVar& r : s.reduce_axis) {
    info.root_value[r.var().get()] = simplify(make_int(DType::i64, r.dom().min) + val[r.get()]);
  }
}

// True when every read in `body`, with each data axis of `s` ranging over [min[d], min[d] +
// extent[d]) and each reduction axis over its domain, provably stays inside its tensor.
bool reads_in_bounds(const StageData& s, const Expr& body, const std::vector<Expr>& min,
                     const std::vector<int64_t>& extent, VarRanges ranges) {
  VarMap values;
  std::vector<Var> offsets;
  for (size_t d = 0; d < s.axis.size(); ++d) {
    offsets.emplace_back("offset");
    ranges[offsets.back().get()] = Range{0, extent[d]};
    values[s.axis[d].var().get()] = min[d] + offsets.back();
  }
  for (const IterVar& r : s.reduce_axis) ranges[r.var().get()] = r.dom();
  ReadCollector all;
  all.visit(body);
  for (const ProducerLoadNode* load : all.loads) {
    for (size_t d = 0; d < load->indices.size(); ++d) {
      arith::Interval b =
          arith::bound(simplify(substitute(load->indices[d], values), ranges), ranges);
      if (!b.bounded() || b.lo < 0 || b.hi >= load->producer.shape()[d]) return false;
    }
  }
  return true;
}

// Regions that may stick out of their tensor (next to a padded split of the consumer) are
// computed as they are when the stage's own reads stay in bounds anyway (a zero-padded packed
// operand, say): the extra elements land in the local buffer and nobody reads them. Otherwise the
// region is shifted inside the tensor (its start clamped to [0, shape - extent]): the buffer then
// holds a few elements the consumer does not read, and every element computed is in bounds. Either
// way no guard or clamp enters the stage's loops. (A stage stored in an argument keeps its region
// and is guarded instead: shifted regions of neighbouring iterations overlap, and their stores
// would race between tasks.)
void shift_regions(StageInfo& s, const std::vector<size_t>& risky, const VarRanges& ranges) {
  const StageData& sd = *s.data;
  std::vector<Expr> shifted = s.min;
  for (size_t d : risky) {
    const Expr last_start = make_int(DType::i64, sd.tensor.shape()[d] - s.extent[d]);
    shifted[d] = simplify(maximum(minimum(s.min[d], last_start), make_int(DType::i64, 0)), ranges);
  }
  std::vector<Expr> chosen = shifted;
  for (size_t d : risky) {
    std::vector<Expr> candidate = shifted;
    candidate[d] = s.min[d];
    if (reads_in_bounds(sd, s.body, candidate, s.extent, ranges)) chosen[d] = s.min[d];
  }
  s.min = reads_in_bounds(sd, s.body, chosen, s.extent, ranges) ? chosen : shifted;
}

struct DimRegion {
  Expr base;
  int64_t lo = 0, hi = -1;
  bool full = false;
};

// The position of stage `s`'s attach axis among the loops of `target`, which must not be inside
// a vectorized loop.
absl::StatusOr<int> attach_position(LowerState& st, const StageData& sd, const StageData& ud) {
  const std::string& name = sd.tensor.name();
  int pos = -1;
  for (size_t i = 0; i < ud.leaf.size(); ++i) {
    if (ud.leaf[i].same_as(sd.attach_axis)) pos = static_cast<int>(i);
  }
  if (pos < 0) {
    return st.error(str_cat("stage '", name, "' is computed at axis '", sd.attach_axis.name(),
                            "' of '", ud.tensor.name(),
                            "', which is no longer one of its loops (it was split or fused)"));
  }
  for (int i = 0; i <= pos; ++i) {
    if (ud.attr(ud.leaf[i]).kind == ForKind::vectorized) {
      return st.error(str_cat("stage '", name, "' is computed at axis '", sd.attach_axis.name(),
                              "' of '", ud.tensor.name(), "', inside its vectorized loop '",
                              ud.leaf[i].name(), "'"));
    }
  }
  return pos;
}

// The loops that vary within one iteration of the attach loop (at `pos` in the target): the
// target's inner loops and all loops of the stages between the reader and the target; and, for
// a stage whose own loops are bound to threadIdx tags (a tile staged in shared memory, computed by
// the threads of a block together), the enclosing loops bound to those tags.
absl::StatusOr<std::set<const VarNode*>> relaxed_loops(LowerState& st, const StageData& sd,
                                                       int reader_index, int target_index,
                                                       int pos) {
  const StageData& ud = *st.stages[target_index].data;
  const std::string& name = sd.tensor.name();
  std::set<const VarNode*> relaxed;
  for (size_t i = pos + 1; i < ud.leaf.size(); ++i) relaxed.insert(ud.leaf[i].var().get());
  for (int k = reader_index; k != target_index;) {
    const StageData& kd = *st.stages[k].data;
    for (const IterVar& l : kd.leaf) relaxed.insert(l.var().get());
    const int next = kd.attach == AttachKind::at ? st.index_of(kd.attach_stage.get()) : -1;
    if (next < 0) {
      return st.error(str_cat("stage '", name, "' is computed at '", ud.tensor.name(),
                              "', whose loops do not contain '",
                              st.stages[reader_index].data->tensor.name(), "' which reads it"));
    }
    if (next == target_index) {
      int at = -1;
      for (size_t i = 0; i < ud.leaf.size(); ++i) {
        if (ud.leaf[i].same_as(kd.attach_axis)) at = static_cast<int>(i);
      }
      if (at < pos) {
        return st.error(str_cat("stage '", name, "' is computed at axis '", sd.attach_axis.name(),
                                "' of '", ud.tensor.name(), "', inside the loop where '",
                                kd.tensor.name(), "' (which needs it) is computed"));
      }
    }
    k = next;
  }
  std::set<std::string> own_tags;
  for (const IterVar& l : sd.leaf) {
    const IterAttr a = sd.attr(l);
    if (a.kind == ForKind::thread_bound && a.thread_tag.rfind("threadIdx.", 0) == 0)
      own_tags.insert(a.thread_tag);
  }
  for (int k = target_index; !own_tags.empty() && k >= 0;) {
    const StageData& kd = *st.stages[k].data;
    for (const IterVar& l : kd.leaf) {
      const IterAttr a = kd.attr(l);
      if (a.kind == ForKind::thread_bound && own_tags.count(a.thread_tag))
        relaxed.insert(l.var().get());
    }
    k = kd.attach == AttachKind::at ? st.index_of(kd.attach_stage.get()) : -1;
  }
  return relaxed;
}

// Per dimension of `sd`'s tensor, the union of the reader's accesses to it: a base expression of
// the fixed loops plus the interval the relaxed loops sweep, or the whole dimension where the
// accesses' bases differ by no constant.
std::vector<DimRegion> read_region(const StageData& sd, const StageInfo& reader,
                                   const std::vector<std::vector<Expr>>& accesses,
                                   const std::set<const VarNode*>& relaxed,
                                   const VarRanges& ranges) {
  const size_t rank = sd.axis.size();
  std::vector<DimRegion> dims(rank);
  bool first = true;
  for (const auto& access : accesses) {
    for (size_t d = 0; d < rank && d < access.size(); ++d) {
      DimRegion& r = dims[d];
      if (r.full) continue;
      Expr e = simplify(substitute(access[d], reader.root_value), ranges);
      arith::LinearForm lf = arith::linearize(e), fixed, var;
      fixed.dtype = var.dtype = lf.dtype;
      fixed.constant = lf.constant;
      for (const auto& t : lf.terms) {
        bool uses_relaxed = false;
        for (const VarNode* v : relaxed) uses_relaxed |= uses_var(t.atom, v);
        (uses_relaxed ? var : fixed).add(t.atom, t.coeff);
      }
      arith::Interval iv = arith::bound(var, ranges);
      if (!iv.bounded()) {
        r.full = true;
        continue;
      }
      Expr base = arith::rebuild(fixed);
      if (first) {
        r.base = base;
        r.lo = iv.lo;
        r.hi = iv.hi;
        continue;
      }
      std::optional<int64_t> diff = as_const_int(simplify(base - r.base, ranges));
      if (!diff) {
        r.full = true;
        continue;
      }
      r.lo = std::min(r.lo, iv.lo + *diff);
      r.hi = std::max(r.hi, iv.hi + *diff);
    }
    first = false;
  }
  return dims;
}

// Stage `s`'s region (min and extent per dimension) from the regions its reader needs: whole
// dimensions where the need covers them, constant regions clipped to the tensor, and regions
// that may stick out of it shifted inside (shift_regions).
void set_region(StageInfo& s, std::vector<DimRegion>& dims, const VarRanges& ranges) {
  const StageData& sd = *s.data;
  const size_t rank = sd.axis.size();
  s.min.assign(rank, Expr());
  s.extent.assign(rank, 0);
  std::vector<size_t> risky;  // dimensions whose region may stick out of the tensor
  for (size_t d = 0; d < rank; ++d) {
    const int64_t shape = sd.tensor.shape()[d];
    DimRegion& r = dims[d];
    int64_t ext = r.hi - r.lo + 1;
    if (r.full || ext >= shape) {
      s.min[d] = make_int(DType::i64, 0);
      s.extent[d] = shape;
      continue;
    }
    Expr mn = simplify(r.base + make_int(DType::i64, r.lo), ranges);
    if (std::optional<int64_t> c = as_const_int(mn)) {
      // A constant region is clipped to the tensor.
      int64_t lo = std::max<int64_t>(*c, 0);
      int64_t hi = std::min<int64_t>(*c + ext - 1, shape - 1);
      mn = make_int(DType::i64, lo);
      ext = std::max<int64_t>(hi - lo + 1, 1);
    } else if (!s.is_param) {
      const Expr last_start = make_int(DType::i64, shape - ext);
      if (as_const_int(simplify(mn <= last_start && mn >= 0, ranges)) != 1) risky.push_back(d);
    }
    s.min[d] = mn;
    s.extent[d] = ext;
  }
  if (!risky.empty()) shift_regions(s, risky, ranges);
}

// The region of stage `s` that one iteration of its attach loop (in stage `target`) needs: what
// its one reader reads there. The reader is the target itself or a stage computed (directly or
// through others) inside the target's loops at or below the attach loop.
absl::Status attached_region(LowerState& st, int s_index, int reader_index, int target_index) {
  StageInfo& s = st.stages[s_index];
  const StageInfo& c = st.stages[reader_index];
  const StageData& sd = *s.data;
  const StageData& ud = *st.stages[target_index].data;
  auto pos = attach_position(st, sd, ud);
  if (!pos.ok()) return pos.status();
  auto relaxed = relaxed_loops(st, sd, reader_index, target_index, *pos);
  if (!relaxed.ok()) return relaxed.status();
  VarRanges ranges = st.enclosing_ranges(reader_index);
  ReadFinder f;
  f.target = sd.tensor.get();
  f.visit(c.body);
  if (f.accesses.empty()) {
    return st.error(str_cat("stage '", sd.tensor.name(), "' is computed at '", ud.tensor.name(),
                            "', which does not read it"));
  }
  std::vector<DimRegion> dims = read_region(sd, c, f.accesses, *relaxed, ranges);
  set_region(s, dims, ranges);
  return absl::OkStatus();
}

}  // namespace

void inline_stages(LowerState& st) {
  Inliner inl(st);
  std::vector<int> roots;
  for (size_t k = 0; k < st.stages.size(); ++k) {
    if (st.stages[k].needed) roots.push_back(static_cast<int>(k));
    st.stages[k].needed = false;
  }
  for (int k : roots) mark_needed(st, inl, k);
}

absl::Status infer_bounds(LowerState& st) {
  for (int k = static_cast<int>(st.stages.size()) - 1; k >= 0; --k) {
    StageInfo& info = st.stages[k];
    if (!info.needed || info.is_input || info.data->is_placeholder()) continue;
    const StageData& sd = *info.data;
    if (sd.attach == AttachKind::inline_) continue;
    const std::string& name = sd.tensor.name();
    // Readers among the computed stages.
    std::vector<int> readers;
    for (size_t j = 0; j < st.stages.size(); ++j) {
      const StageInfo& o = st.stages[j];
      if (!o.needed || o.is_input || o.data->is_placeholder() ||
          o.data->attach == AttachKind::inline_)
        continue;
      for (const Tensor& t : o.reads) {
        if (t.get() == sd.tensor.get()) readers.push_back(static_cast<int>(j));
      }
    }
    if (sd.attach == AttachKind::at) {
      int c = st.index_of(sd.attach_stage.get());
      const StageInfo& ci = st.stages[c];
      if (!ci.needed || ci.is_input || ci.data->attach == AttachKind::inline_) {
        return st.error(str_cat("stage '", name, "' is computed at '", sd.attach_stage.name(),
                                "', which is not computed by this function (inlined or an input)"));
      }
      if (readers.size() > 1) {
        const int other = readers[0] == c ? readers[1] : readers[0];
        return st.error(str_cat("stage '", name, "' is computed at '", sd.attach_stage.name(),
                                "' but '", st.stages[other].data->tensor.name(), "' reads it too"));
      }
      if (readers.empty()) {
        return st.error(str_cat("stage '", name, "' is computed at '", sd.attach_stage.name(),
                                "', which does not read it"));
      }
      if (absl::Status e = attached_region(st, k, readers[0], c); !e.ok()) return e;
      st.stages[c].attached.push_back(k);
    } else {
      info.min.assign(sd.axis.size(), make_int(DType::i64, 0));
      info.extent.assign(sd.tensor.shape().begin(), sd.tensor.shape().end());
    }
    compute_extents(sd, info);
    compute_root_values(sd, info);
  }
  // Attached stages are nested in producer-first order.
  for (StageInfo& info : st.stages) std::sort(info.attached.begin(), info.attached.end());
  return absl::OkStatus();
}

}  // namespace collage::te::detail
