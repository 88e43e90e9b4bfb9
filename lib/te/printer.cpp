// Readable text for expressions, statements and functions: infix expressions with the fewest
// parentheses precedence needs; variables and buffers with clashing names get a numeric suffix.
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "collage/loop_ir.h"
#include "core/str_cat.h"

namespace collage::te {

namespace {

int precedence(ExprKind k) {
  switch (k) {
    case ExprKind::Or:
      return 1;
    case ExprKind::And:
      return 2;
    case ExprKind::EQ:
    case ExprKind::NE:
    case ExprKind::LT:
    case ExprKind::LE:
    case ExprKind::GT:
    case ExprKind::GE:
      return 3;
    case ExprKind::Add:
    case ExprKind::Sub:
      return 4;
    case ExprKind::Mul:
    case ExprKind::Div:
    case ExprKind::Mod:
      return 5;
    default:
      return 7;  // atoms and function-call syntax
  }
}

const char* infix_symbol(ExprKind k) {
  switch (k) {
    case ExprKind::Add:
      return " + ";
    case ExprKind::Sub:
      return " - ";
    case ExprKind::Mul:
      return "*";
    case ExprKind::Div:
      return "/";
    case ExprKind::Mod:
      return " % ";
    case ExprKind::EQ:
      return " == ";
    case ExprKind::NE:
      return " != ";
    case ExprKind::LT:
      return " < ";
    case ExprKind::LE:
      return " <= ";
    case ExprKind::GT:
      return " > ";
    case ExprKind::GE:
      return " >= ";
    case ExprKind::And:
      return " && ";
    case ExprKind::Or:
      return " || ";
    default:
      return nullptr;
  }
}

std::string format_float(double v, DType t) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.9g", v);
  }
  std::string s = buf;
  if (t == DType::f32) return s + "f";
  return s + std::string(dtype_name(t));
}

class Printer : public ExprVisitor {
 public:
  std::ostringstream os;

  void print(const Expr& e) { print_prec(e, 0); }

  void print_stmt(const Stmt& s, int indent) {
    if (!s.defined()) return;
    std::string pad(indent * 2, ' ');
    if (const auto* f = s.as<ForNode>()) {
      os << pad;
      if (f->for_kind == ForKind::thread_bound) {
        os << "for [" << f->thread_tag << "] ";
      } else if (f->for_kind != ForKind::serial) {
        os << for_kind_name(f->for_kind) << " for ";
      } else {
        os << "for ";
      }
      os << "(" << var_name(f->var.get()) << ", ";
      print(f->min);
      os << ", ";
      print(f->extent);
      os << ") {\n";
      print_stmt(f->body, indent + 1);
      os << pad << "}\n";
    } else if (const auto* st = s.as<StoreNode>()) {
      os << pad << buffer_name(st->buffer.get());
      print_indices(st->indices);
      os << " = ";
      print(st->value);
      os << "\n";
    } else if (const auto* l = s.as<LetNode>()) {
      os << pad << "let " << var_name(l->var.get()) << " = ";
      print(l->value);
      os << "\n";
      print_stmt(l->body, indent);
    } else if (const auto* i = s.as<IfThenElseNode>()) {
      os << pad << "if (";
      print(i->cond);
      os << ") {\n";
      print_stmt(i->then_case, indent + 1);
      if (i->else_case.defined()) {
        os << pad << "} else {\n";
        print_stmt(i->else_case, indent + 1);
      }
      os << pad << "}\n";
    } else if (const auto* a = s.as<AllocateNode>()) {
      os << pad << "allocate " << buffer_name(a->buffer.get()) << ": "
         << dtype_name(a->buffer.dtype()) << "[" << shape_to_string(a->buffer.shape()) << "] {\n";
      print_stmt(a->body, indent + 1);
      os << pad << "}\n";
    } else if (const auto* ev = s.as<EvaluateNode>()) {
      os << pad;
      print(ev->value);
      os << "\n";
    } else if (const auto* q = s.as<SeqNode>()) {
      for (const Stmt& c : q->stmts) print_stmt(c, indent);
    }
  }

  std::string buffer_name(const BufferNode* b) {
    if (!b) return "<undef>";
    return unique_name(buffer_names_, b, b->name);
  }

 protected:
  void visit_IntImm(const IntImmNode& n, const Expr&) override {
    if (n.dtype == DType::boolean) {
      os << (n.value ? "true" : "false");
    } else {
      os << n.value;
      if (n.dtype != DType::i64) os << dtype_name(n.dtype);
    }
  }
  void visit_FloatImm(const FloatImmNode& n, const Expr&) override {
    os << format_float(n.value, n.dtype);
  }
  void visit_Var(const VarNode& n, const Expr&) override { os << var_name(&n); }
  void visit_Not(const NotNode& n, const Expr&) override {
    os << "!";
    print_prec(n.a, 7);
  }
  void visit_Select(const SelectNode& n, const Expr&) override {
    print_call("select", {n.cond, n.true_value, n.false_value});
  }
  void visit_Cast(const CastNode& n, const Expr&) override {
    print_call(std::string(dtype_name(n.dtype)), {n.value});
  }
  void visit_Call(const CallNode& n, const Expr&) override {
    print_call(std::string(intrinsic_name(n.op)), n.args);
  }
  void visit_ProducerLoad(const ProducerLoadNode& n, const Expr&) override {
    os << (n.producer.defined() ? n.producer.name() : "<undef>");
    print_indices(n.indices);
  }
  void visit_Load(const LoadNode& n, const Expr&) override {
    os << buffer_name(n.buffer.get());
    print_indices(n.indices);
  }
  void visit_Reduce(const ReduceNode& n, const Expr&) override {
    os << reduce_op_name(n.op) << "(";
    print(n.source);
    os << ", axis=[";
    for (size_t i = 0; i < n.axis.size(); ++i) {
      if (i) os << ", ";
      if (!n.axis[i].defined()) {
        os << "<undef>";
        continue;
      }
      os << var_name(n.axis[i].var().get()) << ": " << n.axis[i].dom().min << ".."
         << n.axis[i].dom().min + n.axis[i].dom().extent;
    }
    os << "]";
    if (!structural_equal(n.init, reduce_identity(n.op, n.dtype))) {
      os << ", init=";
      print(n.init);
    }
    os << ")";
  }
#define COLLAGE_TE_PRINT_BINARY(kind, node)                        \
  void visit_##kind(const BinaryNode& n, const Expr& e) override { \
    print_binary(n, e);                                            \
  }
  COLLAGE_TE_BINARY_KINDS(COLLAGE_TE_PRINT_BINARY, BinaryNode)
#undef COLLAGE_TE_PRINT_BINARY

 private:
  void print_prec(const Expr& e, int parent_prec) {
    if (!e.defined()) {
      os << "<undef>";
      return;
    }
    bool paren = precedence(e.kind()) < parent_prec;
    if (paren) os << "(";
    visit(e);
    if (paren) os << ")";
  }

  void print_binary(const BinaryNode& n, const Expr& e) {
    const char* sym = infix_symbol(e.kind());
    if (!sym) {
      const char* fname = e.kind() == ExprKind::FloorDiv   ? "floordiv"
                          : e.kind() == ExprKind::FloorMod ? "floormod"
                          : e.kind() == ExprKind::Min      ? "min"
                                                           : "max";
      print_call(fname, {n.a, n.b});
      return;
    }
    int p = precedence(e.kind());
    print_prec(n.a, p);
    os << sym;
    // Left-associative: a right operand of the same precedence needs parentheses.
    print_prec(n.b, p + 1);
  }

  void print_call(const std::string& name, const std::vector<Expr>& args) {
    os << name << "(";
    for (size_t i = 0; i < args.size(); ++i) {
      if (i) os << ", ";
      print(args[i]);
    }
    os << ")";
  }

  void print_indices(const std::vector<Expr>& idx) {
    os << "[";
    for (size_t i = 0; i < idx.size(); ++i) {
      if (i) os << ", ";
      print(idx[i]);
    }
    os << "]";
  }

  std::string var_name(const VarNode* v) {
    if (!v) return "<undef>";
    return unique_name(var_names_, v, v->name);
  }

  std::string unique_name(std::map<const void*, std::string>& names, const void* key,
                          const std::string& base) {
    auto it = names.find(key);
    if (it != names.end()) return it->second;
    std::string name = base.empty() ? "v" : base;
    for (int k = 1; used_.count(name); ++k) name = str_cat(base, "_", k);
    used_.insert(name);
    names.emplace(key, name);
    return name;
  }

  std::map<const void*, std::string> var_names_, buffer_names_;
  std::set<std::string> used_;
};

}  // namespace

std::string to_string(const Expr& e) {
  Printer p;
  p.print(e);
  return p.os.str();
}

std::string to_string(const Stmt& s) {
  Printer p;
  p.print_stmt(s, 0);
  return p.os.str();
}

std::string to_string(const PrimFunc& f) {
  Printer p;
  p.os << "func " << f.name << "(";
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (i) p.os << ", ";
    const Buffer& b = f.params[i];
    p.os << p.buffer_name(b.get()) << ": " << dtype_name(b.dtype()) << "["
         << shape_to_string(b.shape()) << "]";
  }
  p.os << ") {\n";
  p.print_stmt(f.body, 1);
  p.os << "}\n";
  return p.os.str();
}

}  // namespace collage::te
