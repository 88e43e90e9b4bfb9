// Parser of the pattern text form documented in include/collage/pattern.h.
#include <cctype>
#include <charconv>
#include <map>

#include "backends/pattern_node.h"
#include "core/str_cat.h"

namespace collage {
namespace {

using NodePtr = std::shared_ptr<const PatternNode>;

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  absl::StatusOr<NodePtr> parse() {
    NodePtr p = term();
    if (error_.ok()) {
      skip_space();
      if (pos_ < s_.size()) fail("expected end of pattern");
    }
    if (!error_.ok()) return error_;
    return p;
  }

 private:
  // Records the first error; parsing then unwinds, returning nulls.
  NodePtr fail(std::string_view what) {
    if (error_.ok())
      error_ =
          absl::InvalidArgumentError(str_cat("pattern '", s_, "': ", what, " at offset ", pos_));
    return nullptr;
  }
  bool failed() const { return !error_.ok(); }

  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  bool accept(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':';
  }
  std::string name() {
    skip_space();
    size_t start = pos_;
    while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }
  // A predicate value token: everything up to ',', ']' or white space.
  std::string token() {
    skip_space();
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != ']' &&
           !std::isspace(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }

  NodePtr term() {
    skip_space();
    if (pos_ >= s_.size()) return fail("expected a pattern");
    if (s_[pos_] == '$') return labelled();
    std::shared_ptr<PatternNode> n;
    PatternNode* preds_target = nullptr;
    if (s_[pos_] == '*') {
      ++pos_;
      n = std::make_shared<PatternNode>();
    } else if (s_[pos_] == '(') {
      ++pos_;
      n = parenthesised(&preds_target);
    } else {
      std::string first = name();
      if (first.empty()) return fail("expected a pattern ('*', 'const', an operator, '(' or '$')");
      n = std::make_shared<PatternNode>();
      if (first == "const") {
        n->kind = PatternKind::constant;
      } else {
        n->kind = PatternKind::op;
        n->names = more_names(std::move(first));
      }
    }
    if (failed()) return nullptr;
    if (peek('[')) predicates(preds_target ? *preds_target : *n);
    if (failed()) return nullptr;
    return n;
  }

  std::vector<std::string> more_names(std::string first) {
    std::vector<std::string> names{std::move(first)};
    while (accept('|')) {
      names.push_back(name());
      if (names.back().empty()) return fail("expected an operator name after '|'"), names;
    }
    return names;
  }

  // After '(': alternatives, an operator with inputs, or an optional operator. For the optional
  // form, predicates written after ')' belong to the operator, returned in *preds_target.
  std::shared_ptr<PatternNode> parenthesised(PatternNode** preds_target) {
    auto n = std::make_shared<PatternNode>();
    if (accept('|')) {
      std::vector<NodePtr> branches = inputs();
      if (failed()) return nullptr;
      if (branches.size() < 2) return fail("alternatives need at least two patterns"), nullptr;
      NodePtr acc = branches[0];
      for (size_t i = 1; i < branches.size(); ++i) {
        auto alt = std::make_shared<PatternNode>();
        alt->kind = PatternKind::alternative;
        alt->first = acc;
        alt->second = branches[i];
        acc = alt;
      }
      return std::const_pointer_cast<PatternNode>(acc);
    }
    std::string first = name();
    if (first.empty() || first == "const")
      return fail("expected an operator name or '|' after '('"), nullptr;
    auto op = std::make_shared<PatternNode>();
    op->kind = PatternKind::op;
    op->names = more_names(std::move(first));
    op->any_inputs = false;
    bool optional = accept('?');
    op->inputs = inputs();
    if (failed()) return nullptr;
    if (!optional) return op;
    if (op->inputs.empty())
      return fail("an optional operator needs the pattern it wraps as its first input"), nullptr;
    n->kind = PatternKind::alternative;
    n->optional = true;
    n->first = op;
    n->second = op->inputs[0];
    *preds_target = op.get();
    return n;
  }

  // Patterns up to and including ')'.
  std::vector<NodePtr> inputs() {
    std::vector<NodePtr> out;
    while (!accept(')')) {
      if (pos_ >= s_.size()) return fail("expected ')'"), out;
      NodePtr p = term();
      if (!p) return out;
      out.push_back(std::move(p));
    }
    return out;
  }

  NodePtr labelled() {
    ++pos_;  // '$'
    std::string label = name();
    if (label.empty()) return fail("expected a label name after '$'");
    if (accept('=')) {
      if (labels_.count(label)) return fail(str_cat("label $", label, " defined twice"));
      NodePtr p = term();
      if (p) labels_[label] = p;
      return p;
    }
    auto it = labels_.find(label);
    if (it == labels_.end()) return fail(str_cat("undefined label $", label));
    return it->second;
  }

  void predicates(PatternNode& n) {
    accept('[');
    do {
      std::string key = name();
      if (key.empty()) return void(fail("expected a predicate name"));
      if (!accept('=')) return void(fail(str_cat("expected '=' after '", key, "'")));
      PatternPredicate p;
      if (!predicate(key, p)) return;
      n.predicates.push_back(std::move(p));
    } while (accept(','));
    if (!accept(']')) fail("expected ',' or ']'");
  }

  bool predicate(const std::string& key, PatternPredicate& p) {
    using Kind = PatternPredicate::Kind;
    if (key.rfind("attr.", 0) == 0 && key.size() > 5) {
      p.kind = Kind::attr;
      p.attr_name = key.substr(5);
      return attr_value(p.attr_value);
    }
    size_t at = pos_;
    std::string v = token();
    if (key == "dtype") {
      p.kind = Kind::dtype;
      auto d = parse_dtype(v);
      if (!d) return pos_ = at, fail(str_cat("unknown dtype '", v, "'")), false;
      p.dtype = *d;
      return true;
    }
    if (key == "rank") {
      p.kind = Kind::rank;
      if (!integer(v, p.rank) || p.rank < 0)
        return pos_ = at, fail(str_cat("bad rank '", v, "'")), false;
      return true;
    }
    if (key == "shape") {
      p.kind = Kind::shape;
      if (v == "scalar") return true;
      size_t start = 0;
      while (true) {
        size_t x = v.find('x', start);
        std::string dim = v.substr(start, x == std::string::npos ? x : x - start);
        int64_t d = -1;
        if (dim != "?" && (!integer(dim, d) || d < 0))
          return pos_ = at, fail(str_cat("bad shape '", v, "'")), false;
        p.shape.push_back(d);
        if (x == std::string::npos) return true;
        start = x + 1;
      }
    }
    if (key == "fusion") {
      p.kind = Kind::fusion;
      for (FusionKind k :
           {FusionKind::elementwise, FusionKind::broadcast, FusionKind::injective,
            FusionKind::reduction, FusionKind::out_elementwise_fusable, FusionKind::opaque}) {
        if (fusion_kind_name(k) == v) {
          p.fusion = k;
          return true;
        }
      }
      return pos_ = at, fail(str_cat("unknown fusion kind '", v, "'")), false;
    }
    pos_ = at;
    return fail(str_cat("unknown predicate '", key,
                        "' (expected dtype, rank, shape, fusion or attr.NAME)")),
           false;
  }

  static bool integer(const std::string& s, int64_t& out) {
    auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
  }
  static bool floating(const std::string& s, double& out) {
    auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
  }

  bool attr_value(PatternAttr& out) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == '"') return string_value(out);
    if (accept('[')) {
      std::vector<int64_t> ints;
      std::vector<double> floats;
      bool any_float = false;
      if (!accept(']')) {
        do {
          size_t at = pos_;
          std::string t = token();
          int64_t i;
          double f;
          if (integer(t, i)) {
            ints.push_back(i);
            floats.push_back(static_cast<double>(i));
          } else if (floating(t, f)) {
            any_float = true;
            floats.push_back(f);
          } else {
            return pos_ = at, fail(str_cat("bad number '", t, "'")), false;
          }
        } while (accept(','));
        if (!accept(']')) return fail("expected ',' or ']' in a list"), false;
      }
      out = any_float ? PatternAttr(floats) : PatternAttr(ints);
      return true;
    }
    size_t at = pos_;
    std::string t = token();
    int64_t i;
    double f;
    if (integer(t, i)) {
      out = i;
    } else if (floating(t, f)) {
      out = f;
    } else {
      return pos_ = at, fail(str_cat("bad attribute value '", t, "'")), false;
    }
    return true;
  }

  bool string_value(PatternAttr& out) {
    ++pos_;  // opening quote
    std::string v;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      v += s_[pos_++];
    }
    if (pos_ >= s_.size()) return fail("unterminated string"), false;
    ++pos_;
    out = std::move(v);
    return true;
  }

  std::string_view s_;
  size_t pos_ = 0;
  absl::Status error_;
  std::map<std::string, NodePtr> labels_;
};

}  // namespace

absl::StatusOr<Pattern> parse_pattern(std::string_view text) {
  Parser p(text);
  auto n = p.parse();
  if (!n.ok()) return n.status();
  return Pattern(std::move(*n));
}

}  // namespace collage
