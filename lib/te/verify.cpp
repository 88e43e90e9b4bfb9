// The loop-IR verifier: scoping of variables and buffers, index counts and types, loop kinds.
#include <set>

#include "collage/loop_ir.h"
#include "core/str_cat.h"

namespace collage::te {

namespace {

class Verifier : public IRVisitor {
 public:
  explicit Verifier(const PrimFunc& f) : func_(f) {
    for (const Buffer& b : f.params) {
      if (!b.defined()) {
        fail("has an undefined parameter buffer");
        continue;
      }
      buffers_.insert(b.get());
    }
  }
  absl::Status status;

  using IRVisitor::visit;
  void visit(const Expr& e) override {
    if (!e.defined()) {
      fail("contains an undefined expression");
      return;
    }
    IRVisitor::visit(e);
  }

 protected:
  void visit_Var(const VarNode& n, const Expr&) override {
    if (!vars_.count(&n))
      fail(str_cat("uses variable '", n.name, "' outside the loop or let that binds it"));
  }
  void visit_ProducerLoad(const ProducerLoadNode& n, const Expr&) override {
    fail(str_cat("still reads tensor '", n.producer.defined() ? n.producer.name() : "?",
                 "' (ProducerLoad must be lowered to Load)"));
  }
  void visit_Reduce(const ReduceNode&, const Expr&) override {
    fail("contains a Reduce expression (reductions must be lowered to loops)");
  }
  void visit_Load(const LoadNode& n, const Expr& e) override {
    check_access(n.buffer, n.indices, "load from");
    ExprVisitor::visit_Load(n, e);
  }
  void visit_Select(const SelectNode& n, const Expr& e) override {
    if (n.cond.defined() && n.cond.dtype() != DType::boolean)
      fail("has a select whose condition is not bool");
    ExprVisitor::visit_Select(n, e);
  }

  void visit_For(const ForNode& n, const Stmt&) override {
    visit(n.min);
    visit(n.extent);
    if (n.min.defined() && is_float(n.min.dtype()))
      fail(str_cat("loop '", n.var.name(), "' has a float bound"));
    if ((n.for_kind == ForKind::vectorized || n.for_kind == ForKind::unrolled) &&
        !n.extent.as<IntImmNode>()) {
      fail(
          str_cat(for_kind_name(n.for_kind), " loop '", n.var.name(), "' needs a constant extent"));
    }
    if (n.for_kind == ForKind::thread_bound && n.thread_tag.empty()) {
      fail(str_cat("thread-bound loop '", n.var.name(), "' has no thread tag"));
    }
    bind(n.var, n.body);
  }
  void visit_Let(const LetNode& n, const Stmt&) override {
    visit(n.value);
    bind(n.var, n.body);
  }
  void visit_Store(const StoreNode& n, const Stmt& s) override {
    check_access(n.buffer, n.indices, "store to");
    if (n.value.defined() && n.buffer.defined() && n.value.dtype() != n.buffer.dtype()) {
      fail(str_cat("stores a ", dtype_name(n.value.dtype()), " value to ",
                   dtype_name(n.buffer.dtype()), " buffer '", n.buffer.name(), "'"));
    }
    IRVisitor::visit_Store(n, s);
  }
  void visit_IfThenElse(const IfThenElseNode& n, const Stmt& s) override {
    if (n.cond.defined() && n.cond.dtype() != DType::boolean)
      fail("has an if whose condition is not bool");
    IRVisitor::visit_IfThenElse(n, s);
  }
  void visit_Allocate(const AllocateNode& n, const Stmt&) override {
    if (!n.buffer.defined()) {
      fail("allocates an undefined buffer");
      return;
    }
    bool added = buffers_.insert(n.buffer.get()).second;
    visit(n.body);
    if (added) buffers_.erase(n.buffer.get());
  }

 private:
  void fail(const std::string& what) {
    if (status.ok())
      status = absl::InvalidArgumentError(str_cat("function '", func_.name, "' ", what));
  }

  void bind(const Var& v, const Stmt& body) {
    if (!v.defined()) {
      fail("binds an undefined variable");
      return;
    }
    bool added = vars_.insert(v.get()).second;
    visit(body);
    if (added) vars_.erase(v.get());
  }

  void check_access(const Buffer& b, const std::vector<Expr>& idx, const char* what) {
    if (!b.defined()) {
      fail(str_cat(what, " an undefined buffer"));
      return;
    }
    if (!buffers_.count(b.get())) {
      fail(str_cat(what, " buffer '", b.name(),
                   "' which is neither a parameter nor allocated around it"));
    }
    if (idx.size() != b.shape().size()) {
      fail(str_cat(what, " buffer '", b.name(), "' with ", idx.size(), " indices but it has rank ",
                   b.shape().size()));
    }
    for (const Expr& i : idx) {
      if (i.defined() && (is_float(i.dtype()) || i.dtype() == DType::boolean)) {
        fail(str_cat(what, " buffer '", b.name(), "' with a non-integer index ", to_string(i)));
      }
    }
  }

  const PrimFunc& func_;
  std::set<const VarNode*> vars_;
  std::set<const BufferNode*> buffers_;
};

}  // namespace

absl::Status verify(const PrimFunc& f) {
  Verifier v(f);
  v.visit(f.body);
  return v.status;
}

}  // namespace collage::te
