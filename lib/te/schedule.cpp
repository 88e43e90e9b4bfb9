// Schedule construction and the stage primitives (split, fuse, reorder, loop kinds, attachment,
// cache_write, pack), each checking its arguments and recording the first error.
#include <algorithm>
#include <set>
#include <sstream>

#include "collage/loop_ir.h"
#include "compute_check.h"
#include "core/str_cat.h"
#include "schedule_impl.h"

namespace collage::te {

namespace detail {

std::vector<IterVar> StageData::root_axes() const {
  std::vector<IterVar> r = axis;
  r.insert(r.end(), reduce_axis.begin(), reduce_axis.end());
  return r;
}

IterAttr StageData::attr(const IterVar& iv) const {
  auto it = attrs.find(iv.get());
  return it == attrs.end() ? IterAttr{} : it->second;
}

int ScheduleImpl::find(const TensorNode* t) const {
  for (size_t i = 0; i < stages.size(); ++i) {
    if (stages[i].tensor.get() == t) return static_cast<int>(i);
  }
  return -1;
}

void ScheduleImpl::error(const std::string& message) {
  if (status.ok()) status = absl::InvalidArgumentError(message);
}

namespace {
class ReadCollector : public ExprVisitor {
 public:
  std::vector<Tensor> reads;

 protected:
  void visit_ProducerLoad(const ProducerLoadNode& n, const Expr& e) override {
    bool seen = false;
    for (const Tensor& t : reads) seen |= t.same_as(n.producer);
    if (!seen && n.producer.defined()) reads.push_back(n.producer);
    ExprVisitor::visit_ProducerLoad(n, e);
  }
};
}  // namespace

std::vector<Tensor> stage_inputs(const StageData& s) {
  ReadCollector c;
  c.visit(s.body);
  return c.reads;
}

}  // namespace detail

using detail::AttachKind;
using detail::FuseRel;
using detail::ScheduleImpl;
using detail::SplitRel;
using detail::StageData;

namespace {

// Adds t and everything it reads to `stages`, producers first.
void collect_stages(const Tensor& t, std::set<const TensorNode*>& seen, ScheduleImpl& impl) {
  if (!t.defined() || !seen.insert(t.get()).second) return;
  for (const Tensor& in : input_tensors(t)) collect_stages(in, seen, impl);
  if (absl::Status st = check_compute(t); !st.ok()) impl.error(std::string(st.message()));
  StageData s;
  s.tensor = t;
  s.axis = t->axis;
  s.reduce_axis = t->reduce_axis;
  s.body = t->body;
  if (t.op_kind() == OpKind::compute) s.leaf = s.root_axes();
  impl.stages.push_back(std::move(s));
}

int leaf_position(const StageData& s, const IterVar& iv) {
  for (size_t i = 0; i < s.leaf.size(); ++i) {
    if (s.leaf[i].same_as(iv)) return static_cast<int>(i);
  }
  return -1;
}

std::string axis_name(const IterVar& iv) {
  return iv.defined() ? iv.name() : std::string("<undef>");
}

bool valid_thread_tag(const std::string& tag) {
  static constexpr const char* kTags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                          "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  for (const char* t : kTags) {
    if (tag == t) return true;
  }
  return false;
}

// True when `consumer` reads `producer` directly or through other stages.
bool reads_transitively(const ScheduleImpl& impl, const StageData& consumer,
                        const TensorNode* producer) {
  for (const Tensor& in : detail::stage_inputs(consumer)) {
    if (in.get() == producer) return true;
    int idx = impl.find(in.get());
    if (idx >= 0 && reads_transitively(impl, impl.stages[idx], producer)) return true;
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Schedule

Schedule::Schedule(std::vector<Tensor> outputs) : impl_(std::make_unique<ScheduleImpl>()) {
  impl_->outputs = std::move(outputs);
  std::set<const TensorNode*> seen;
  for (const Tensor& t : impl_->outputs) {
    if (!t.defined()) {
      impl_->error("create_schedule: an output tensor is undefined");
      continue;
    }
    collect_stages(t, seen, *impl_);
  }
  for (const Tensor& t : impl_->outputs) {
    int idx = t.defined() ? impl_->find(t.get()) : -1;
    if (idx < 0) continue;
    impl_->stages[idx].is_output = true;
    if (impl_->stages[idx].is_placeholder()) {
      impl_->error(
          str_cat("create_schedule: output '", t.name(), "' is a placeholder, not a compute"));
    }
  }
}

Schedule::Schedule(const Schedule& other) : impl_(std::make_unique<ScheduleImpl>(*other.impl_)) {}
Schedule& Schedule::operator=(const Schedule& other) {
  if (this != &other) impl_ = std::make_unique<ScheduleImpl>(*other.impl_);
  return *this;
}
Schedule::Schedule(Schedule&&) noexcept = default;
Schedule& Schedule::operator=(Schedule&&) noexcept = default;
Schedule::~Schedule() = default;

Schedule create_schedule(std::vector<Tensor> outputs) {
  return Schedule(std::move(outputs));
}

Stage Schedule::operator[](const Tensor& t) {
  if (!t.defined() || impl_->find(t.get()) < 0) {
    impl_->error(
        str_cat("schedule has no stage for tensor '", t.defined() ? t.name() : "<undef>", "'"));
    return Stage(impl_.get(), nullptr);
  }
  return Stage(impl_.get(), t.get());
}

const absl::Status& Schedule::status() const {
  return impl_->status;
}
const std::vector<Tensor>& Schedule::outputs() const {
  return impl_->outputs;
}

std::vector<Tensor> Schedule::stage_tensors() const {
  std::vector<Tensor> r;
  for (const StageData& s : impl_->stages) r.push_back(s.tensor);
  return r;
}

Tensor Schedule::cache_write(const Tensor& t) {
  int idx = t.defined() ? impl_->find(t.get()) : -1;
  if (idx < 0) {
    impl_->error(str_cat("cache_write: schedule has no stage for tensor '",
                         t.defined() ? t.name() : "<undef>", "'"));
    return Tensor();
  }
  StageData& s = impl_->stages[idx];
  const std::string& name = t.name();
  if (s.is_placeholder()) {
    impl_->error(str_cat("cache_write: stage '", name, "' is a placeholder"));
    return Tensor();
  }
  if (!s.relations.empty() || !s.attrs.empty() || s.attach != AttachKind::root || s.pack ||
      s.leaf.size() != s.axis.size() + s.reduce_axis.size()) {
    impl_->error(str_cat("cache_write: stage '", name,
                         "' must be cached before any other primitive is applied to it"));
    return Tensor();
  }
  // The cache computes the old body over fresh axes.
  auto node = std::make_shared<TensorNode>();
  node->name = name + ".local";
  node->shape = t.shape();
  node->dtype = t.dtype();
  node->kind = OpKind::compute;
  node->tag = t->tag;
  VarMap remap;
  for (const IterVar& iv : s.axis) {
    IterVar c(Var(iv.name() + ".c", iv.var().dtype()), iv.dom(), iv.kind());
    remap[iv.var().get()] = c.var();
    node->axis.push_back(c);
  }
  for (const IterVar& iv : s.reduce_axis) {
    IterVar c(Var(iv.name(), iv.var().dtype()), iv.dom(), iv.kind());
    remap[iv.var().get()] = c.var();
    node->reduce_axis.push_back(c);
  }
  if (const auto* r = s.body.as<ReduceNode>()) {
    node->body = Expr(std::make_shared<ReduceNode>(r->dtype, r->op, substitute(r->source, remap),
                                                   node->reduce_axis, substitute(r->init, remap)));
  } else {
    node->body = substitute(s.body, remap);
  }
  Tensor cache(node);

  StageData c;
  c.tensor = cache;
  c.axis = node->axis;
  c.reduce_axis = node->reduce_axis;
  c.body = node->body;
  c.leaf = c.root_axes();

  std::vector<Expr> idx_exprs;
  for (const IterVar& iv : s.axis) idx_exprs.push_back(iv.var());
  s.body = cache(idx_exprs);
  s.reduce_axis.clear();
  s.leaf = s.axis;
  impl_->stages.insert(impl_->stages.begin() + idx, std::move(c));
  return cache;
}

std::string Schedule::to_string() const {
  std::ostringstream os;
  for (const StageData& s : impl_->stages) {
    os << "stage " << s.tensor.name();
    if (s.is_placeholder()) {
      os << " (placeholder)\n";
      continue;
    }
    if (s.is_output) os << " [output]";
    if (s.pack) os << " [pack]";
    switch (s.attach) {
      case AttachKind::root:
        os << " at root";
        break;
      case AttachKind::inline_:
        os << " inlined";
        break;
      case AttachKind::at:
        os << " at " << s.attach_stage.name() << "." << axis_name(s.attach_axis);
        break;
    }
    os << "\n  loops:";
    for (const IterVar& iv : s.leaf) {
      os << " " << iv.name();
      detail::IterAttr a = s.attr(iv);
      if (a.kind == ForKind::thread_bound) {
        os << "(" << a.thread_tag << ")";
      } else if (a.kind != ForKind::serial) {
        os << "(" << for_kind_name(a.kind) << ")";
      }
    }
    os << "\n";
    for (const detail::Relation& r : s.relations) {
      if (const auto* sp = std::get_if<SplitRel>(&r)) {
        os << "  split " << sp->parent.name() << " -> " << sp->outer.name() << ", "
           << sp->inner.name() << (sp->factor > 0 ? " factor " : " nparts ")
           << (sp->factor > 0 ? sp->factor : sp->nparts) << "\n";
      } else {
        const auto& f = std::get<FuseRel>(r);
        os << "  fuse " << f.outer.name() << ", " << f.inner.name() << " -> " << f.fused.name()
           << "\n";
      }
    }
  }
  return os.str();
}

// ---------------------------------------------------------------------------------------------
// Stage

StageData* Stage::data() const {
  if (!tensor_) return nullptr;
  int idx = impl_->find(tensor_);
  return idx < 0 ? nullptr : &impl_->stages[idx];
}

Tensor Stage::tensor() const {
  StageData* s = data();
  return s ? s->tensor : Tensor();
}

std::string Stage::name() const {
  StageData* s = data();
  return s ? s->tensor.name() : std::string("<none>");
}

IterVar Stage::axis(int i) const {
  StageData* s = data();
  if (!s || i < 0 || i >= static_cast<int>(s->axis.size())) return IterVar();
  return s->axis[i];
}

IterVar Stage::reduce_axis(int i) const {
  StageData* s = data();
  if (!s || i < 0 || i >= static_cast<int>(s->reduce_axis.size())) return IterVar();
  return s->reduce_axis[i];
}

std::vector<IterVar> Stage::leaf_axes() const {
  StageData* s = data();
  return s ? s->leaf : std::vector<IterVar>{};
}

namespace {

// The stage data for a primitive, or null after recording why the primitive cannot run.
StageData* usable(ScheduleImpl* impl, StageData* s, const char* primitive) {
  if (!s) {
    impl->error(str_cat(primitive, ": the stage handle refers to no stage of this schedule"));
    return nullptr;
  }
  if (s->is_placeholder()) {
    impl->error(
        str_cat(primitive, ": stage '", s->tensor.name(), "' is a placeholder and has no loops"));
    return nullptr;
  }
  return s;
}

// Position of a leaf axis, or -1 after recording an error.
int leaf_or_error(ScheduleImpl* impl, const StageData& s, const IterVar& iv,
                  const char* primitive) {
  int p = iv.defined() ? leaf_position(s, iv) : -1;
  if (p < 0) {
    impl->error(str_cat(primitive, ": axis '", axis_name(iv), "' is not a current loop of stage '",
                        s.tensor.name(),
                        "' (it was split or fused away, or belongs to another stage)"));
  }
  return p;
}

}  // namespace

std::pair<IterVar, IterVar> Stage::split(const IterVar& parent, int64_t factor) {
  StageData* s = usable(impl_, data(), "split");
  IterVar none_o(Var("invalid.outer"), {}, IterKind::data_par),
      none_i(Var("invalid.inner"), {}, IterKind::data_par);
  if (!s) return {none_o, none_i};
  int p = leaf_or_error(impl_, *s, parent, "split");
  if (p < 0) return {none_o, none_i};
  if (factor < 1) {
    impl_->error(str_cat("split: factor for axis '", parent.name(), "' of stage '",
                         s->tensor.name(), "' must be >= 1, got ", factor));
    return {none_o, none_i};
  }
  if (s->attr(parent).kind != ForKind::serial) {
    impl_->error(str_cat("split: axis '", parent.name(), "' of stage '", s->tensor.name(),
                         "' is already ", for_kind_name(s->attr(parent).kind),
                         "; split it before choosing its loop kind"));
    return {none_o, none_i};
  }
  const int64_t ext = parent.dom().extent;
  IterVar outer(Var(parent.name() + ".outer", parent.var().dtype()),
                {0, (ext + factor - 1) / factor}, parent.kind());
  IterVar inner(Var(parent.name() + ".inner", parent.var().dtype()), {0, factor}, parent.kind());
  s->relations.push_back(SplitRel{parent, outer, inner, factor, 0});
  s->leaf[p] = outer;
  s->leaf.insert(s->leaf.begin() + p + 1, inner);
  return {outer, inner};
}

std::pair<IterVar, IterVar> Stage::split_nparts(const IterVar& parent, int64_t nparts) {
  StageData* s = usable(impl_, data(), "split_nparts");
  IterVar none_o(Var("invalid.outer"), {}, IterKind::data_par),
      none_i(Var("invalid.inner"), {}, IterKind::data_par);
  if (!s) return {none_o, none_i};
  int p = leaf_or_error(impl_, *s, parent, "split_nparts");
  if (p < 0) return {none_o, none_i};
  if (nparts < 1) {
    impl_->error(str_cat("split_nparts: nparts for axis '", parent.name(), "' of stage '",
                         s->tensor.name(), "' must be >= 1, got ", nparts));
    return {none_o, none_i};
  }
  if (s->attr(parent).kind != ForKind::serial) {
    impl_->error(str_cat("split_nparts: axis '", parent.name(), "' of stage '", s->tensor.name(),
                         "' is already ", for_kind_name(s->attr(parent).kind),
                         "; split it before choosing its loop kind"));
    return {none_o, none_i};
  }
  const int64_t ext = parent.dom().extent;
  IterVar outer(Var(parent.name() + ".outer", parent.var().dtype()), {0, nparts}, parent.kind());
  IterVar inner(Var(parent.name() + ".inner", parent.var().dtype()),
                {0, (ext + nparts - 1) / nparts}, parent.kind());
  s->relations.push_back(SplitRel{parent, outer, inner, 0, nparts});
  s->leaf[p] = outer;
  s->leaf.insert(s->leaf.begin() + p + 1, inner);
  return {outer, inner};
}

std::array<IterVar, 4> Stage::tile(const IterVar& x, const IterVar& y, int64_t x_factor,
                                   int64_t y_factor) {
  auto [xo, xi] = split(x, x_factor);
  auto [yo, yi] = split(y, y_factor);
  reorder({xo, yo, xi, yi});
  return {xo, yo, xi, yi};
}

IterVar Stage::fuse(const IterVar& outer, const IterVar& inner) {
  StageData* s = usable(impl_, data(), "fuse");
  IterVar none(Var("invalid.fused"), {}, IterKind::data_par);
  if (!s) return none;
  int po = leaf_or_error(impl_, *s, outer, "fuse");
  int pi = po < 0 ? -1 : leaf_or_error(impl_, *s, inner, "fuse");
  if (po < 0 || pi < 0) return none;
  if (pi != po + 1) {
    impl_->error(str_cat(
        "fuse: axes '", outer.name(), "' and '", inner.name(), "' of stage '", s->tensor.name(),
        "' are not adjacent (the outer one immediately followed by the inner one)"));
    return none;
  }
  if (outer.kind() != inner.kind()) {
    impl_->error(str_cat("fuse: stage '", s->tensor.name(),
                         "' cannot fuse data-parallel and reduction axes ('", outer.name(), "', '",
                         inner.name(), "')"));
    return none;
  }
  if (s->attr(outer).kind != ForKind::serial || s->attr(inner).kind != ForKind::serial) {
    impl_->error(str_cat("fuse: axes '", outer.name(), "' and '", inner.name(), "' of stage '",
                         s->tensor.name(), "' must be fused before choosing their loop kinds"));
    return none;
  }
  IterVar fused(Var(outer.name() + "." + inner.name() + ".fused", outer.var().dtype()),
                {0, outer.dom().extent * inner.dom().extent}, outer.kind());
  s->relations.push_back(FuseRel{outer, inner, fused});
  s->leaf[po] = fused;
  s->leaf.erase(s->leaf.begin() + pi);
  return fused;
}

Stage& Stage::reorder(const std::vector<IterVar>& order) {
  StageData* s = usable(impl_, data(), "reorder");
  if (!s) return *this;
  std::vector<int> pos;
  for (const IterVar& iv : order) {
    int p = leaf_or_error(impl_, *s, iv, "reorder");
    if (p < 0) return *this;
    if (std::find(pos.begin(), pos.end(), p) != pos.end()) {
      impl_->error(str_cat("reorder: axis '", iv.name(), "' of stage '", s->tensor.name(),
                           "' is listed twice"));
      return *this;
    }
    pos.push_back(p);
  }
  std::vector<int> sorted = pos;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < order.size(); ++i) s->leaf[sorted[i]] = order[i];
  return *this;
}

namespace {
// Sets a loop kind after the common checks.
void set_kind(ScheduleImpl* impl, StageData* s, const IterVar& iv, ForKind kind,
              const std::string& tag, const char* primitive) {
  if (!s) return;
  if (leaf_or_error(impl, *s, iv, primitive) < 0) return;
  if (iv.kind() == IterKind::reduce && kind != ForKind::unrolled && kind != ForKind::serial) {
    const char* verb = kind == ForKind::vectorized ? "vectorize"
                       : kind == ForKind::parallel ? "parallelize"
                                                   : "bind";
    impl->error(str_cat(primitive, ": stage '", s->tensor.name(), "' cannot ", verb,
                        " reduction axis '", iv.name(), "' (its iterations depend on each other)"));
    return;
  }
  ForKind old = s->attr(iv).kind;
  if (old != ForKind::serial && old != kind) {
    impl->error(str_cat(primitive, ": axis '", iv.name(), "' of stage '", s->tensor.name(),
                        "' is already ", for_kind_name(old)));
    return;
  }
  s->attrs[iv.get()] = detail::IterAttr{kind, tag};
}
}  // namespace

Stage& Stage::vectorize(const IterVar& axis) {
  set_kind(impl_, usable(impl_, data(), "vectorize"), axis, ForKind::vectorized, "", "vectorize");
  return *this;
}

Stage& Stage::parallel(const IterVar& axis) {
  set_kind(impl_, usable(impl_, data(), "parallel"), axis, ForKind::parallel, "", "parallel");
  return *this;
}

Stage& Stage::unroll(const IterVar& axis) {
  set_kind(impl_, usable(impl_, data(), "unroll"), axis, ForKind::unrolled, "", "unroll");
  return *this;
}

Stage& Stage::bind(const IterVar& axis, const std::string& thread_tag) {
  StageData* s = usable(impl_, data(), "bind");
  if (s && !valid_thread_tag(thread_tag)) {
    impl_->error(str_cat("bind: unknown thread tag '", thread_tag, "' for axis '", axis_name(axis),
                         "' of stage '", s->tensor.name(),
                         "' (expected blockIdx.x/y/z or threadIdx.x/y/z)"));
    return *this;
  }
  set_kind(impl_, s, axis, ForKind::thread_bound, thread_tag, "bind");
  return *this;
}

Stage& Stage::compute_at(const Stage& consumer, const IterVar& axis) {
  StageData* s = usable(impl_, data(), "compute_at");
  if (!s) return *this;
  const std::string& name = s->tensor.name();
  StageData* c = consumer.impl_ == impl_ ? consumer.data() : nullptr;
  if (!c) {
    impl_->error(str_cat("compute_at: the consumer given for stage '", name,
                         "' is not a stage of this schedule"));
    return *this;
  }
  if (c == s) {
    impl_->error(str_cat("compute_at: stage '", name, "' cannot be computed at itself"));
    return *this;
  }
  if (s->is_output) {
    impl_->error(str_cat("compute_at: stage '", name, "' is an output and stays at the top level"));
    return *this;
  }
  if (s->pack) {
    impl_->error(
        str_cat("compute_at: stage '", name, "' is a pack stage and stays at the top level"));
    return *this;
  }
  if (!reads_transitively(*impl_, *c, s->tensor.get())) {
    impl_->error(str_cat("compute_at: stage '", c->tensor.name(), "' does not read '", name,
                         "' (directly or through other stages), so '", name,
                         "' cannot be computed at it"));
    return *this;
  }
  if (leaf_or_error(impl_, *c, axis, "compute_at") < 0) return *this;
  s->attach = AttachKind::at;
  s->attach_stage = c->tensor;
  s->attach_axis = axis;
  return *this;
}

Stage& Stage::compute_inline() {
  StageData* s = usable(impl_, data(), "compute_inline");
  if (!s) return *this;
  const std::string& name = s->tensor.name();
  if (s->is_output) {
    impl_->error(
        str_cat("compute_inline: stage '", name, "' is an output and needs its own loops"));
  } else if (!s->reduce_axis.empty() || s->body.as<ReduceNode>()) {
    impl_->error(
        str_cat("compute_inline: stage '", name, "' is a reduction and cannot be inlined"));
  } else if (s->pack) {
    impl_->error(
        str_cat("compute_inline: stage '", name, "' is a pack stage and stays at the top level"));
  } else {
    s->attach = AttachKind::inline_;
  }
  return *this;
}

Stage& Stage::compute_root() {
  StageData* s = usable(impl_, data(), "compute_root");
  if (s) s->attach = AttachKind::root;
  return *this;
}

Stage& Stage::pack() {
  StageData* s = usable(impl_, data(), "pack");
  if (!s) return *this;
  for (const Tensor& in : detail::stage_inputs(*s)) {
    int idx = impl_->find(in.get());
    if (idx >= 0 && !impl_->stages[idx].is_placeholder()) {
      impl_->error(str_cat("pack: stage '", s->tensor.name(), "' reads '", in.name(),
                           "' which is not a placeholder; a pack stage may only repack inputs"));
      return *this;
    }
  }
  if (s->is_output) {
    impl_->error(str_cat("pack: stage '", s->tensor.name(), "' is an output"));
    return *this;
  }
  s->attach = AttachKind::root;
  s->pack = true;
  return *this;
}

}  // namespace collage::te
