// Loop-IR construction: buffers and statement make functions.
#include "collage/loop_ir.h"

namespace collage::te {

Buffer::Buffer(std::string name, DType dtype, Shape shape)
    : node_(std::make_shared<BufferNode>(BufferNode{std::move(name), dtype, std::move(shape)})) {}

std::string_view for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::serial:
      return "serial";
    case ForKind::parallel:
      return "parallel";
    case ForKind::vectorized:
      return "vectorized";
    case ForKind::unrolled:
      return "unrolled";
    case ForKind::thread_bound:
      return "thread_bound";
  }
  return "?";
}

Stmt make_for(Var var, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag) {
  return Stmt(std::make_shared<ForNode>(std::move(var), std::move(min), std::move(extent), kind,
                                        std::move(thread_tag), std::move(body)));
}

Stmt make_store(Buffer buffer, std::vector<Expr> indices, Expr value) {
  return Stmt(std::make_shared<StoreNode>(std::move(buffer), std::move(indices), std::move(value)));
}

Stmt make_let(Var var, Expr value, Stmt body) {
  return Stmt(std::make_shared<LetNode>(std::move(var), std::move(value), std::move(body)));
}

Stmt make_if(Expr cond, Stmt then_case, Stmt else_case) {
  return Stmt(std::make_shared<IfThenElseNode>(std::move(cond), std::move(then_case),
                                               std::move(else_case)));
}

Stmt make_allocate(Buffer buffer, Stmt body) {
  return Stmt(std::make_shared<AllocateNode>(std::move(buffer), std::move(body)));
}

Stmt make_evaluate(Expr value) {
  return Stmt(std::make_shared<EvaluateNode>(std::move(value)));
}

Stmt make_seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s.defined()) continue;
    if (const auto* seq = s.as<SeqNode>()) {
      flat.insert(flat.end(), seq->stmts.begin(), seq->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  return Stmt(std::make_shared<SeqNode>(std::move(flat)));
}

}  // namespace collage::te
