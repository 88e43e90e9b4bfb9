// Well-formedness checks of placeholders and computes.
#include "compute_check.h"

#include <set>

#include "collage/loop_ir.h"
#include "core/str_cat.h"

namespace collage::te {

namespace {

class ComputeChecker : public ExprVisitor {
 public:
  explicit ComputeChecker(const Tensor& t) : t_(t) {
    for (const IterVar& iv : t->axis) vars_.insert(iv.var().get());
  }
  absl::Status status;

  void check_body() {
    const Expr& body = t_->body;
    if (!body.defined()) return fail("has no body");
    if (const auto* r = body.as<ReduceNode>()) {
      for (const IterVar& iv : r->axis) {
        if (!iv.defined()) return fail("has an undefined reduction axis");
        if (iv.kind() != IterKind::reduce) {
          return fail(str_cat("reduces over '", iv.name(),
                              "' which is not a reduction axis (use reduce_axis)"));
        }
        if (iv.dom().extent < 0)
          return fail(str_cat("has reduction axis '", iv.name(), "' with a negative extent"));
        vars_.insert(iv.var().get());
      }
      visit(r->source);
      visit(r->init);
      return;
    }
    visit(body);
  }

  using ExprVisitor::visit;
  void visit(const Expr& e) override {
    if (!e.defined()) return fail("has an undefined expression in its body");
    ExprVisitor::visit(e);
  }

 protected:
  void visit_Var(const VarNode& n, const Expr&) override {
    if (!vars_.count(&n)) {
      fail(str_cat("uses variable '", n.name,
                   "' which is neither one of its axes nor an axis its reduction runs over"));
    }
  }
  void visit_Reduce(const ReduceNode&, const Expr&) override {
    fail("has a reduction that is not the outermost expression of its body");
  }
  void visit_Load(const LoadNode&, const Expr&) override {
    fail("reads a loop-IR buffer (computes read tensors)");
  }
  void visit_Call(const CallNode& n, const Expr& e) override {
    if (static_cast<int>(n.args.size()) != intrinsic_arity(n.op)) {
      fail(str_cat("calls ", intrinsic_name(n.op), " with ", n.args.size(), " arguments"));
    }
    ExprVisitor::visit_Call(n, e);
  }
  void visit_ProducerLoad(const ProducerLoadNode& n, const Expr& e) override {
    if (!n.producer.defined()) return fail("reads an undefined tensor");
    if (static_cast<int>(n.indices.size()) != n.producer.ndim()) {
      return fail(str_cat("reads '", n.producer.name(), "' with ", n.indices.size(),
                          " indices but it has rank ", n.producer.ndim()));
    }
    for (const Expr& i : n.indices) {
      if (i.defined() && (is_float(i.dtype()) || i.dtype() == DType::boolean)) {
        return fail(
            str_cat("reads '", n.producer.name(), "' with the non-integer index ", to_string(i)));
      }
    }
    ExprVisitor::visit_ProducerLoad(n, e);
  }

 private:
  void fail(const std::string& what) {
    if (status.ok())
      status = absl::InvalidArgumentError(str_cat("compute '", t_.name(), "' ", what));
  }
  const Tensor& t_;
  std::set<const VarNode*> vars_;
};

}  // namespace

absl::Status check_compute(const Tensor& t) {
  if (!t.defined()) return absl::InvalidArgumentError("undefined tensor");
  const char* what = t.op_kind() == OpKind::placeholder ? "placeholder" : "compute";
  for (int64_t d : t.shape()) {
    if (d < 0) {
      return absl::InvalidArgumentError(str_cat(what, " '", t.name(),
                                                "' has a negative dimension in shape ",
                                                shape_to_string(t.shape())));
    }
  }
  if (t.op_kind() == OpKind::placeholder) return absl::OkStatus();
  if (!t->error.empty()) return absl::InvalidArgumentError(t->error);
  ComputeChecker c(t);
  c.check_body();
  return c.status;
}

}  // namespace collage::te
