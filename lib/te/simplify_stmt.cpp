// The statement simplifier: simplifies every expression with the ranges of the enclosing loops and
// lets, drops conditions it can decide and loops of extent 0, and substitutes loops of extent 1 and
// lets of constants.
#include "arith.h"
#include "collage/loop_ir.h"

namespace collage::te {

namespace {

class StmtSimplifier : public IRMutator {
 public:
  using IRMutator::mutate;
  Expr mutate(const Expr& e) override { return simplify(e, ranges_); }

 protected:
  Stmt mutate_For(const ForNode& n, const Stmt& s) override {
    Expr mn = mutate(n.min), ext = mutate(n.extent);
    const auto* ext_imm = ext.as<IntImmNode>();
    if (ext_imm && ext_imm->value <= 0) return Stmt();
    if (ext_imm && ext_imm->value == 1 && n.for_kind != ForKind::thread_bound) {
      return mutate(substitute(n.body, {{n.var.get(), mn}}));
    }
    arith::Interval lo = arith::bound(mn, ranges_), len = arith::bound(ext, ranges_);
    const bool known =
        lo.lo != arith::kNegInf && lo.hi != arith::kPosInf && len.hi != arith::kPosInf;
    Scoped scope(this, n.var.get(),
                 known ? Range{lo.lo, arith::sat_add(lo.hi, len.hi) - lo.lo} : Range{0, 0});
    Stmt body = mutate(n.body);
    if (!body.defined()) return Stmt();
    if (mn.same_as(n.min) && ext.same_as(n.extent) && body.same_as(n.body)) return s;
    return make_for(n.var, mn, ext, n.for_kind, body, n.thread_tag);
  }

  Stmt mutate_Let(const LetNode& n, const Stmt& s) override {
    Expr v = mutate(n.value);
    if (v.kind() == ExprKind::IntImm || v.kind() == ExprKind::FloatImm ||
        v.kind() == ExprKind::Var) {
      return mutate(substitute(n.body, {{n.var.get(), v}}));
    }
    Range r{0, 0};
    if (!is_float(v.dtype())) {
      arith::Interval b = arith::bound(v, ranges_);
      if (b.bounded() && arith::sat_add(b.hi, -b.lo) < arith::kPosInf)
        r = Range{b.lo, b.hi - b.lo + 1};
    }
    Scoped scope(this, n.var.get(), r);
    Stmt body = mutate(n.body);
    if (!body.defined()) return Stmt();
    if (v.same_as(n.value) && body.same_as(n.body)) return s;
    return make_let(n.var, v, body);
  }

  Stmt mutate_IfThenElse(const IfThenElseNode& n, const Stmt& s) override {
    Expr c = mutate(n.cond);
    if (const auto* imm = c.as<IntImmNode>()) return mutate(imm->value ? n.then_case : n.else_case);
    Stmt t = mutate(n.then_case), e = mutate(n.else_case);
    if (!t.defined() && !e.defined()) return Stmt();
    if (!t.defined()) return make_if(logical_not(c), e);
    if (c.same_as(n.cond) && t.same_as(n.then_case) && e.same_as(n.else_case)) return s;
    return make_if(c, t, e);
  }

  Stmt mutate_Allocate(const AllocateNode& n, const Stmt& s) override {
    Stmt body = mutate(n.body);
    if (!body.defined()) return Stmt();
    return body.same_as(n.body) ? s : make_allocate(n.buffer, body);
  }

  Stmt mutate_Seq(const SeqNode& n, const Stmt& s) override {
    bool changed = false;
    std::vector<Stmt> out;
    for (const Stmt& c : n.stmts) {
      Stmt m = mutate(c);
      if (!m.same_as(c)) changed = true;
      if (m.defined()) out.push_back(std::move(m));
    }
    if (!changed) return s;
    if (out.empty()) return Stmt();
    return make_seq(std::move(out));
  }

 private:
  // Adds a variable range for the lifetime of the object (an extent of 0 adds nothing).
  class Scoped {
   public:
    Scoped(StmtSimplifier* s, const VarNode* v, Range r) : s_(s), v_(v), active_(r.extent > 0) {
      if (active_) s_->ranges_[v_] = r;
    }
    ~Scoped() {
      if (active_) s_->ranges_.erase(v_);
    }

   private:
    StmtSimplifier* s_;
    const VarNode* v_;
    bool active_;
  };

  VarRanges ranges_;
};

}  // namespace

Stmt simplify(const Stmt& s) {
  StmtSimplifier simp;
  return simp.mutate(s);
}

}  // namespace collage::te
