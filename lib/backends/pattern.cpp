// Pattern construction (wildcard, is_op, predicates, optional, alternatives) and the printer.
#include <cassert>
#include <charconv>
#include <map>

#include "backends/pattern_node.h"
#include "core/str_cat.h"

namespace collage {
namespace {

std::shared_ptr<PatternNode> copy_of(const PatternNode& n) {
  return std::make_shared<PatternNode>(n);
}

Pattern with_predicate(const PatternNode& n, PatternPredicate p) {
  auto c = copy_of(n);
  c->predicates.push_back(std::move(p));
  return Pattern(std::move(c));
}

std::string float_text(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  // Floats always carry a '.', an exponent or a non-finite name, so they parse back as floats.
  if (s.find_first_of(".eEni") == std::string::npos) s += ".0";
  return s;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The optional form `(Op? p rest...)` applies when the alternative came from optional(), has no
// predicates of its own, and its first branch is an operator whose first input is the second
// branch.
bool prints_as_optional(const PatternNode& alt) {
  if (alt.kind != PatternKind::alternative || !alt.optional || !alt.predicates.empty())
    return false;
  const PatternNode& op = *alt.first;
  return op.kind == PatternKind::op && !op.any_inputs && !op.inputs.empty() &&
         op.inputs[0] == alt.second;
}

std::string attr_value_text(const PatternAttr& v) {
  struct Visit {
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return float_text(d); }
    std::string operator()(const std::string& s) const { return quoted(s); }
    std::string operator()(const std::vector<int64_t>& l) const {
      std::string s = "[";
      for (size_t i = 0; i < l.size(); ++i) s += str_cat(i ? "," : "", l[i]);
      return s + "]";
    }
    std::string operator()(const std::vector<double>& l) const {
      std::string s = "[";
      for (size_t i = 0; i < l.size(); ++i) s += str_cat(i ? "," : "", float_text(l[i]));
      return s + "]";
    }
  };
  return std::visit(Visit{}, v);
}

std::string predicate_text(const PatternPredicate& p) {
  switch (p.kind) {
    case PatternPredicate::Kind::dtype:
      return str_cat("dtype=", dtype_name(p.dtype));
    case PatternPredicate::Kind::rank:
      return str_cat("rank=", p.rank);
    case PatternPredicate::Kind::shape: {
      if (p.shape.empty()) return "shape=scalar";
      std::string s = "shape=";
      for (size_t i = 0; i < p.shape.size(); ++i)
        s += str_cat(i ? "x" : "", p.shape[i] < 0 ? std::string("?") : std::to_string(p.shape[i]));
      return s;
    }
    case PatternPredicate::Kind::fusion:
      return str_cat("fusion=", fusion_kind_name(p.fusion));
    case PatternPredicate::Kind::attr:
      return str_cat("attr.", p.attr_name, "=", attr_value_text(p.attr_value));
  }
  return "";
}

// Prints a pattern DAG; nodes reached more than once get a label at their first occurrence.
class Printer {
 public:
  explicit Printer(const PatternNode* root) {
    count(root);
    // Decided from the raw reference counts: an optional whose operator is referenced only by
    // it prints as (Op? p ...), which shows p once although two edges lead to it.
    for (auto& [alt, form] : optional_form_)
      form = prints_as_optional(*alt) && refs_[alt->first.get()] == 1;
    for (const auto& [alt, form] : optional_form_)
      if (form) --refs_[alt->second.get()];
  }

  std::string print(const PatternNode* n) {
    if (auto it = labels_.find(n); it != labels_.end()) return str_cat("$", it->second);
    std::string out;
    if (refs_[n] > 1) {
      int label = next_label_++;
      labels_[n] = label;
      out = str_cat("$", label, "=");
    }
    const std::vector<PatternPredicate>* preds = &n->predicates;
    switch (n->kind) {
      case PatternKind::wildcard:
        out += "*";
        break;
      case PatternKind::constant:
        out += "const";
        break;
      case PatternKind::op:
        if (n->any_inputs) {
          out += names(*n);
        } else {
          out += str_cat("(", names(*n));
          for (const auto& in : n->inputs) out += str_cat(" ", print(in.get()));
          out += ")";
        }
        break;
      case PatternKind::alternative:
        if (optional_form_[n]) {
          const PatternNode& op = *n->first;
          out += str_cat("(", names(op), "?");
          for (const auto& in : op.inputs) out += str_cat(" ", print(in.get()));
          out += ")";
          preds = &op.predicates;
        } else {
          out += "(|";
          for (const PatternNode* b : branches(n)) out += str_cat(" ", print(b));
          out += ")";
        }
        break;
    }
    if (!preds->empty()) {
      out += "[";
      for (size_t i = 0; i < preds->size(); ++i)
        out += str_cat(i ? ", " : "", predicate_text((*preds)[i]));
      out += "]";
    }
    return out;
  }

 private:
  static std::string names(const PatternNode& n) {
    std::string s;
    for (size_t i = 0; i < n.names.size(); ++i) s += str_cat(i ? "|" : "", n.names[i]);
    return s;
  }

  void count(const PatternNode* n) {
    if (refs_[n]++ > 0) return;
    if (n->kind == PatternKind::op) {
      for (const auto& in : n->inputs) count(in.get());
    } else if (n->kind == PatternKind::alternative) {
      count(n->first.get());
      count(n->second.get());
      optional_form_[n] = false;
    }
  }

  // A chain of plain alternatives (unlabelled, no predicates) prints as one (| a b c ...).
  std::vector<const PatternNode*> branches(const PatternNode* n) {
    std::vector<const PatternNode*> out;
    for (const PatternNode* b : {n->first.get(), n->second.get()}) {
      if (b->kind == PatternKind::alternative && refs_[b] == 1 && b->predicates.empty() &&
          !optional_form_[b]) {
        auto sub = branches(b);
        out.insert(out.end(), sub.begin(), sub.end());
      } else {
        out.push_back(b);
      }
    }
    return out;
  }

  std::map<const PatternNode*, int> refs_;
  std::map<const PatternNode*, int> labels_;
  std::map<const PatternNode*, bool> optional_form_;
  int next_label_ = 0;
};

}  // namespace

Pattern wildcard() {
  return Pattern(std::make_shared<PatternNode>());
}

Pattern is_constant() {
  auto n = std::make_shared<PatternNode>();
  n->kind = PatternKind::constant;
  return Pattern(std::move(n));
}

Pattern is_op(std::vector<std::string> names) {
  auto n = std::make_shared<PatternNode>();
  n->kind = PatternKind::op;
  n->names = std::move(names);
  return Pattern(std::move(n));
}

Pattern Pattern::with_inputs(std::vector<Pattern> inputs) const {
  assert(node_->kind == PatternKind::op && "only operator patterns take inputs");
  auto c = copy_of(*node_);
  c->any_inputs = false;
  c->inputs.clear();
  for (const Pattern& p : inputs) c->inputs.push_back(p.node());
  return Pattern(std::move(c));
}

Pattern Pattern::has_attr(std::string name, PatternAttr value) const {
  PatternPredicate p;
  p.kind = PatternPredicate::Kind::attr;
  p.attr_name = std::move(name);
  p.attr_value = std::move(value);
  return with_predicate(*node_, std::move(p));
}

Pattern Pattern::has_dtype(DType dtype) const {
  PatternPredicate p;
  p.kind = PatternPredicate::Kind::dtype;
  p.dtype = dtype;
  return with_predicate(*node_, std::move(p));
}

Pattern Pattern::has_rank(int64_t rank) const {
  PatternPredicate p;
  p.kind = PatternPredicate::Kind::rank;
  p.rank = rank;
  return with_predicate(*node_, std::move(p));
}

Pattern Pattern::has_shape(Shape shape) const {
  PatternPredicate p;
  p.kind = PatternPredicate::Kind::shape;
  p.shape = std::move(shape);
  return with_predicate(*node_, std::move(p));
}

Pattern Pattern::has_fusion_kind(FusionKind kind) const {
  PatternPredicate p;
  p.kind = PatternPredicate::Kind::fusion;
  p.fusion = kind;
  return with_predicate(*node_, std::move(p));
}

Pattern Pattern::optional(const std::function<Pattern(const Pattern&)>& fn) const {
  auto n = std::make_shared<PatternNode>();
  n->kind = PatternKind::alternative;
  n->first = fn(*this).node();
  n->second = node_;
  n->optional = true;
  return Pattern(std::move(n));
}

Pattern Pattern::operator|(const Pattern& other) const {
  auto n = std::make_shared<PatternNode>();
  n->kind = PatternKind::alternative;
  n->first = node_;
  n->second = other.node_;
  return Pattern(std::move(n));
}

std::string Pattern::to_string() const {
  return Printer(node_.get()).print(node_.get());
}

}  // namespace collage
