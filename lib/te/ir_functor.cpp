// Default visitors and mutators for expressions and statements (dispatch generated from the node
// lists); mutators return the same node when no child changed.
#include "collage/loop_ir.h"

namespace collage::te {

// ---------------------------------------------------------------------------------------------
// ExprVisitor

void ExprVisitor::visit(const Expr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
#define COLLAGE_TE_DISPATCH(kind, node)                  \
  case ExprKind::kind:                                   \
    visit_##kind(static_cast<const node&>(*e.get()), e); \
    return;
    COLLAGE_TE_EXPR_NODES(COLLAGE_TE_DISPATCH)
#undef COLLAGE_TE_DISPATCH
  }
}

void ExprVisitor::visit_IntImm(const IntImmNode&, const Expr&) {}
void ExprVisitor::visit_FloatImm(const FloatImmNode&, const Expr&) {}
void ExprVisitor::visit_Var(const VarNode&, const Expr&) {}
#define COLLAGE_TE_VISIT_BINARY(kind, node)                          \
  void ExprVisitor::visit_##kind(const BinaryNode& n, const Expr&) { \
    visit(n.a);                                                      \
    visit(n.b);                                                      \
  }
COLLAGE_TE_BINARY_KINDS(COLLAGE_TE_VISIT_BINARY, BinaryNode)
#undef COLLAGE_TE_VISIT_BINARY
void ExprVisitor::visit_Not(const NotNode& n, const Expr&) {
  visit(n.a);
}
void ExprVisitor::visit_Select(const SelectNode& n, const Expr&) {
  visit(n.cond);
  visit(n.true_value);
  visit(n.false_value);
}
void ExprVisitor::visit_Cast(const CastNode& n, const Expr&) {
  visit(n.value);
}
void ExprVisitor::visit_Call(const CallNode& n, const Expr&) {
  for (const Expr& a : n.args) visit(a);
}
void ExprVisitor::visit_ProducerLoad(const ProducerLoadNode& n, const Expr&) {
  for (const Expr& i : n.indices) visit(i);
}
void ExprVisitor::visit_Load(const LoadNode& n, const Expr&) {
  for (const Expr& i : n.indices) visit(i);
}
void ExprVisitor::visit_Reduce(const ReduceNode& n, const Expr&) {
  visit(n.source);
  visit(n.init);
}

// ---------------------------------------------------------------------------------------------
// ExprMutator

Expr ExprMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
#define COLLAGE_TE_DISPATCH(kind, node) \
  case ExprKind::kind:                  \
    return mutate_##kind(static_cast<const node&>(*e.get()), e);
    COLLAGE_TE_EXPR_NODES(COLLAGE_TE_DISPATCH)
#undef COLLAGE_TE_DISPATCH
  }
  return e;
}

namespace {
// Mutates each expression of a list; `changed` tells whether any differs.
std::vector<Expr> mutate_all(ExprMutator& m, const std::vector<Expr>& in, bool& changed) {
  std::vector<Expr> out;
  out.reserve(in.size());
  for (const Expr& e : in) {
    out.push_back(m.mutate(e));
    if (!out.back().same_as(e)) changed = true;
  }
  return out;
}
}  // namespace

Expr ExprMutator::mutate_IntImm(const IntImmNode&, const Expr& e) {
  return e;
}
Expr ExprMutator::mutate_FloatImm(const FloatImmNode&, const Expr& e) {
  return e;
}
Expr ExprMutator::mutate_Var(const VarNode&, const Expr& e) {
  return e;
}
#define COLLAGE_TE_MUTATE_BINARY(kind, node)                            \
  Expr ExprMutator::mutate_##kind(const BinaryNode& n, const Expr& e) { \
    Expr a = mutate(n.a), b = mutate(n.b);                              \
    if (a.same_as(n.a) && b.same_as(n.b)) return e;                     \
    return make_binary(ExprKind::kind, std::move(a), std::move(b));     \
  }
COLLAGE_TE_BINARY_KINDS(COLLAGE_TE_MUTATE_BINARY, BinaryNode)
#undef COLLAGE_TE_MUTATE_BINARY
Expr ExprMutator::mutate_Not(const NotNode& n, const Expr& e) {
  Expr a = mutate(n.a);
  return a.same_as(n.a) ? e : logical_not(std::move(a));
}
Expr ExprMutator::mutate_Select(const SelectNode& n, const Expr& e) {
  Expr c = mutate(n.cond), t = mutate(n.true_value), f = mutate(n.false_value);
  if (c.same_as(n.cond) && t.same_as(n.true_value) && f.same_as(n.false_value)) return e;
  return select(std::move(c), std::move(t), std::move(f));
}
Expr ExprMutator::mutate_Cast(const CastNode& n, const Expr& e) {
  Expr v = mutate(n.value);
  return v.same_as(n.value) ? e : cast(n.dtype, std::move(v));
}
Expr ExprMutator::mutate_Call(const CallNode& n, const Expr& e) {
  bool changed = false;
  std::vector<Expr> args = mutate_all(*this, n.args, changed);
  if (!changed) return e;
  return n.op == Intrinsic::reinterpret ? reinterpret(n.dtype, std::move(args[0]))
                                        : call(n.op, std::move(args));
}
Expr ExprMutator::mutate_ProducerLoad(const ProducerLoadNode& n, const Expr& e) {
  bool changed = false;
  std::vector<Expr> idx = mutate_all(*this, n.indices, changed);
  return changed ? n.producer(std::move(idx)) : e;
}
Expr ExprMutator::mutate_Load(const LoadNode& n, const Expr& e) {
  bool changed = false;
  std::vector<Expr> idx = mutate_all(*this, n.indices, changed);
  return changed ? load(n.buffer, std::move(idx)) : e;
}
Expr ExprMutator::mutate_Reduce(const ReduceNode& n, const Expr& e) {
  Expr s = mutate(n.source), i = mutate(n.init);
  if (s.same_as(n.source) && i.same_as(n.init)) return e;
  return Expr(std::make_shared<ReduceNode>(s.defined() ? s.dtype() : n.dtype, n.op, s, n.axis, i));
}

// ---------------------------------------------------------------------------------------------
// IRVisitor

void IRVisitor::visit(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
#define COLLAGE_TE_DISPATCH(kind, node)                  \
  case StmtKind::kind:                                   \
    visit_##kind(static_cast<const node&>(*s.get()), s); \
    return;
    COLLAGE_TE_STMT_NODES(COLLAGE_TE_DISPATCH)
#undef COLLAGE_TE_DISPATCH
  }
}

void IRVisitor::visit_For(const ForNode& n, const Stmt&) {
  visit(n.min);
  visit(n.extent);
  visit(n.body);
}
void IRVisitor::visit_Store(const StoreNode& n, const Stmt&) {
  for (const Expr& i : n.indices) visit(i);
  visit(n.value);
}
void IRVisitor::visit_Let(const LetNode& n, const Stmt&) {
  visit(n.value);
  visit(n.body);
}
void IRVisitor::visit_IfThenElse(const IfThenElseNode& n, const Stmt&) {
  visit(n.cond);
  visit(n.then_case);
  visit(n.else_case);
}
void IRVisitor::visit_Allocate(const AllocateNode& n, const Stmt&) {
  visit(n.body);
}
void IRVisitor::visit_Evaluate(const EvaluateNode& n, const Stmt&) {
  visit(n.value);
}
void IRVisitor::visit_Seq(const SeqNode& n, const Stmt&) {
  for (const Stmt& s : n.stmts) visit(s);
}

// ---------------------------------------------------------------------------------------------
// IRMutator

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s.kind()) {
#define COLLAGE_TE_DISPATCH(kind, node) \
  case StmtKind::kind:                  \
    return mutate_##kind(static_cast<const node&>(*s.get()), s);
    COLLAGE_TE_STMT_NODES(COLLAGE_TE_DISPATCH)
#undef COLLAGE_TE_DISPATCH
  }
  return s;
}

Stmt IRMutator::mutate_For(const ForNode& n, const Stmt& s) {
  Expr mn = mutate(n.min), ext = mutate(n.extent);
  Stmt body = mutate(n.body);
  if (mn.same_as(n.min) && ext.same_as(n.extent) && body.same_as(n.body)) return s;
  return make_for(n.var, std::move(mn), std::move(ext), n.for_kind, std::move(body), n.thread_tag);
}
Stmt IRMutator::mutate_Store(const StoreNode& n, const Stmt& s) {
  bool changed = false;
  std::vector<Expr> idx = mutate_all(*this, n.indices, changed);
  Expr v = mutate(n.value);
  if (!changed && v.same_as(n.value)) return s;
  return make_store(n.buffer, std::move(idx), std::move(v));
}
Stmt IRMutator::mutate_Let(const LetNode& n, const Stmt& s) {
  Expr v = mutate(n.value);
  Stmt body = mutate(n.body);
  if (v.same_as(n.value) && body.same_as(n.body)) return s;
  return make_let(n.var, std::move(v), std::move(body));
}
Stmt IRMutator::mutate_IfThenElse(const IfThenElseNode& n, const Stmt& s) {
  Expr c = mutate(n.cond);
  Stmt t = mutate(n.then_case), e = mutate(n.else_case);
  if (c.same_as(n.cond) && t.same_as(n.then_case) && e.same_as(n.else_case)) return s;
  return make_if(std::move(c), std::move(t), std::move(e));
}
Stmt IRMutator::mutate_Allocate(const AllocateNode& n, const Stmt& s) {
  Stmt body = mutate(n.body);
  return body.same_as(n.body) ? s : make_allocate(n.buffer, std::move(body));
}
Stmt IRMutator::mutate_Evaluate(const EvaluateNode& n, const Stmt& s) {
  Expr v = mutate(n.value);
  return v.same_as(n.value) ? s : make_evaluate(std::move(v));
}
Stmt IRMutator::mutate_Seq(const SeqNode& n, const Stmt& s) {
  bool changed = false;
  std::vector<Stmt> out;
  out.reserve(n.stmts.size());
  for (const Stmt& c : n.stmts) {
    out.push_back(mutate(c));
    if (!out.back().same_as(c)) changed = true;
  }
  return changed ? make_seq(std::move(out)) : s;
}

}  // namespace collage::te
