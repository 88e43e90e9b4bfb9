// Variable substitution and variable-use queries on expressions and statements.
#include "collage/loop_ir.h"

namespace collage::te {

namespace {

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& vars) : vars_(vars) {}

 protected:
  Expr mutate_Var(const VarNode& n, const Expr& e) override {
    auto it = vars_.find(&n);
    return it == vars_.end() ? e : it->second;
  }

 private:
  const VarMap& vars_;
};

class VarUseFinder : public ExprVisitor {
 public:
  explicit VarUseFinder(const VarNode* v) : var_(v) {}
  bool found = false;

 protected:
  void visit_Var(const VarNode& n, const Expr&) override {
    if (&n == var_) found = true;
  }

 private:
  const VarNode* var_;
};

}  // namespace

Expr substitute(const Expr& e, const VarMap& vars) {
  if (vars.empty()) return e;
  Substituter s(vars);
  return s.mutate(e);
}

Stmt substitute(const Stmt& st, const VarMap& vars) {
  if (vars.empty()) return st;
  Substituter s(vars);
  return s.mutate(st);
}

bool uses_var(const Expr& e, const VarNode* v) {
  VarUseFinder f(v);
  f.visit(e);
  return f.found;
}

}  // namespace collage::te
