// Structural equality of expressions.
#include "collage/loop_ir.h"

namespace collage::te {

namespace {

bool equal_lists(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!structural_equal(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace

bool structural_equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  switch (a.kind()) {
    case ExprKind::IntImm:
      return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
    case ExprKind::FloatImm: {
      double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
      return x == y || (x != x && y != y);
    }
    case ExprKind::Var:
      return false;  // variables are equal only by identity
    case ExprKind::Not:
      return structural_equal(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case ExprKind::Select: {
      const auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
      return structural_equal(x->cond, y->cond) && structural_equal(x->true_value, y->true_value) &&
             structural_equal(x->false_value, y->false_value);
    }
    case ExprKind::Cast:
      return structural_equal(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case ExprKind::Call: {
      const auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
      return x->op == y->op && equal_lists(x->args, y->args);
    }
    case ExprKind::ProducerLoad: {
      const auto *x = a.as<ProducerLoadNode>(), *y = b.as<ProducerLoadNode>();
      return x->producer.same_as(y->producer) && equal_lists(x->indices, y->indices);
    }
    case ExprKind::Load: {
      const auto *x = a.as<LoadNode>(), *y = b.as<LoadNode>();
      return x->buffer.same_as(y->buffer) && equal_lists(x->indices, y->indices);
    }
    case ExprKind::Reduce: {
      const auto *x = a.as<ReduceNode>(), *y = b.as<ReduceNode>();
      if (x->op != y->op || x->axis.size() != y->axis.size()) return false;
      for (size_t i = 0; i < x->axis.size(); ++i) {
        if (!x->axis[i].same_as(y->axis[i])) return false;
      }
      return structural_equal(x->source, y->source) && structural_equal(x->init, y->init);
    }
    default: {
      const auto *x = a.as<BinaryNode>(), *y = b.as<BinaryNode>();
      return structural_equal(x->a, y->a) && structural_equal(x->b, y->b);
    }
  }
}

}  // namespace collage::te
