// Lowering a schedule to a PrimFunc: arguments and storage, the straight-line pipeline (inline,
// bounds, loop nests, buffer reads, simplify, verify) and the checks of what a kernel may contain.
#include <set>

#include "collage/schedule.h"
#include "core/str_cat.h"
#include "lower_state.h"

namespace collage::te {

namespace {

using detail::AttachKind;
using detail::LowerState;
using detail::StageData;
using detail::StageInfo;

// Replaces tensor reads by buffer loads, offset by the region each buffer holds.
class BufferReads : public ExprMutator {
 public:
  explicit BufferReads(const LowerState& st) : st_(st) {}
  absl::Status status;

 protected:
  Expr mutate_ProducerLoad(const ProducerLoadNode& n, const Expr& e) override {
    Expr rebuilt = ExprMutator::mutate_ProducerLoad(n, e);
    const auto* pl = rebuilt.as<ProducerLoadNode>();
    int k = st_.index_of(n.producer.get());
    if (k < 0 || !st_.stages[k].buffer.defined()) {
      if (status.ok())
        status = st_.error(str_cat("tensor '", n.producer.name(), "' has no storage"));
      return rebuilt;
    }
    const StageInfo& info = st_.stages[k];
    std::vector<Expr> idx;
    for (size_t d = 0; d < pl->indices.size(); ++d) {
      idx.push_back(info.is_param || d >= info.min.size() ? pl->indices[d]
                                                          : pl->indices[d] - info.min[d]);
    }
    return load(info.buffer, std::move(idx));
  }

 private:
  const LowerState& st_;
};

class StmtBufferReads : public IRMutator {
 public:
  explicit StmtBufferReads(BufferReads& r) : reads_(r) {}
  using IRMutator::mutate;
  Expr mutate(const Expr& e) override { return reads_.mutate(e); }

 private:
  BufferReads& reads_;
};

// Checks loop kinds: one vectorized loop per stage, parallel loops only as the outermost loop of
// a top-level stage, and a parallel stage alone at the top level.
absl::Status check_loop_kinds(const LowerState& st, const std::vector<int>& root_stages) {
  int parallel_stage = -1;
  for (size_t k = 0; k < st.stages.size(); ++k) {
    const StageInfo& info = st.stages[k];
    if (!info.needed || info.is_input || info.data->is_placeholder() ||
        info.data->attach == AttachKind::inline_) {
      continue;
    }
    const StageData& s = *info.data;
    std::string vectorized;
    for (size_t i = 0; i < s.leaf.size(); ++i) {
      ForKind kind = s.attr(s.leaf[i]).kind;
      if (kind == ForKind::vectorized) {
        if (!vectorized.empty()) {
          return st.error(str_cat("stage '", s.tensor.name(), "' vectorizes two loops ('",
                                  vectorized, "' and '", s.leaf[i].name(), "')"));
        }
        vectorized = s.leaf[i].name();
      }
      if (kind != ForKind::parallel) continue;
      if (i != 0 || s.attach != AttachKind::root) {
        return st.error(
            str_cat("stage '", s.tensor.name(), "': parallel loop '", s.leaf[i].name(),
                    "' must be the outermost loop of a top-level stage (the kernel splits it "
                    "into tasks)"));
      }
      parallel_stage = static_cast<int>(k);
    }
  }
  if (parallel_stage >= 0 && root_stages.size() > 1) {
    for (int k : root_stages) {
      if (k == parallel_stage) continue;
      return st.error(
          str_cat("stage '", st.stages[k].data->tensor.name(),
                  "' is computed at the top level beside "
                  "parallel stage '",
                  st.stages[parallel_stage].data->tensor.name(),
                  "': compute it at a loop of that stage, inline it, or pass it as an argument "
                  "(a kernel has one parallel loop nest)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<PrimFunc> lower_impl(const Schedule& schedule, const std::vector<Tensor>& roots,
                                    const std::vector<Tensor>& args, const std::string& name,
                                    bool take_packs_as_inputs) {
  if (!schedule.status().ok()) return schedule.status();
  LowerState st;
  st.sched = &schedule.impl();
  st.func_name = name;
  st.stages.resize(st.sched->stages.size());
  for (size_t k = 0; k < st.stages.size(); ++k) st.stages[k].data = &st.sched->stages[k];

  // Arguments.
  PrimFunc f;
  f.name = name;
  std::set<const TensorNode*> in_args;
  for (const Tensor& t : args) {
    int k = t.defined() ? st.index_of(t.get()) : -1;
    if (k < 0) {
      return st.error(str_cat("argument '", t.defined() ? t.name() : "<undef>",
                              "' is not a tensor of this schedule"));
    }
    if (!in_args.insert(t.get()).second)
      return st.error(str_cat("argument '", t.name(), "' is listed twice"));
    StageInfo& info = st.stages[k];
    if (info.data->attach == AttachKind::inline_) {
      return st.error(str_cat("argument '", t.name(),
                              "' is computed inline and has no storage; "
                              "compute_root it or leave it out of the arguments"));
    }
    info.buffer = Buffer(t.name(), t.dtype(), t.shape());
    info.is_param = true;
    info.is_input = info.data->is_placeholder() || (take_packs_as_inputs && info.data->pack);
    f.params.push_back(info.buffer);
  }
  for (StageInfo& info : st.stages) {
    if (info.data->is_placeholder()) info.is_input = true;
  }

  // What this function computes.
  for (const Tensor& t : roots) {
    if (!in_args.count(t.get()))
      return st.error(str_cat("output '", t.name(), "' is not among the arguments"));
    st.stages[st.index_of(t.get())].needed = true;
  }
  detail::inline_stages(st);
  for (const StageInfo& info : st.stages) {
    if (info.needed && info.is_input && !info.is_param) {
      return st.error(str_cat("tensor '", info.data->tensor.name(),
                              "' is read but is not among the arguments"));
    }
  }
  if (absl::Status s = detail::infer_bounds(st); !s.ok()) return s;

  // Storage of computed stages that are not arguments.
  std::vector<int> root_stages;
  for (size_t k = 0; k < st.stages.size(); ++k) {
    StageInfo& info = st.stages[k];
    if (!info.needed || info.is_input || info.data->attach == AttachKind::inline_) continue;
    if (info.data->attach == AttachKind::root) root_stages.push_back(static_cast<int>(k));
    if (!info.is_param) {
      info.buffer = Buffer(info.data->tensor.name(), info.data->tensor.dtype(),
                           Shape(info.extent.begin(), info.extent.end()));
    }
  }
  if (absl::Status s = check_loop_kinds(st, root_stages); !s.ok()) return s;

  // Top-level nests in producer-first order; local storage spans the rest of the function.
  Stmt body;
  for (auto it = root_stages.rbegin(); it != root_stages.rend(); ++it) {
    absl::StatusOr<Stmt> nest = detail::build_stage_nest(st, *it);
    if (!nest.ok()) return nest.status();
    body = make_seq({*nest, body});
    if (!st.stages[*it].is_param) body = make_allocate(st.stages[*it].buffer, body);
  }
  if (!body.defined()) body = make_seq({});

  BufferReads reads(st);
  StmtBufferReads stmt_reads(reads);
  body = stmt_reads.mutate(body);
  if (!reads.status.ok()) return reads.status;
  f.body = simplify(body);
  if (!f.body.defined()) f.body = make_seq({});
  if (absl::Status s = verify(f); !s.ok()) {
    return absl::InternalError(str_cat("lowering produced an invalid function: ", s.message()));
  }
  return f;
}

}  // namespace

absl::StatusOr<PrimFunc> lower(const Schedule& schedule, const std::vector<Tensor>& args,
                               const std::string& name) {
  return lower_impl(schedule, schedule.outputs(), args, name, /*take_packs_as_inputs=*/true);
}

absl::StatusOr<PrimFunc> lower_pack(const Schedule& schedule, const Tensor& packed,
                                    const std::vector<Tensor>& args, const std::string& name) {
  if (!schedule.status().ok()) return schedule.status();
  int k = packed.defined() ? schedule.impl().find(packed.get()) : -1;
  if (k < 0 || !schedule.impl().stages[k].pack) {
    return absl::InvalidArgumentError(str_cat("lower_pack '", name, "': '",
                                              packed.defined() ? packed.name() : "<undef>",
                                              "' is not a pack stage of this schedule"));
  }
  return lower_impl(schedule, {packed}, args, name, /*take_packs_as_inputs=*/false);
}

}  // namespace collage::te
