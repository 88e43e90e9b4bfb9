// The backend pattern language (Collage / TVM dataflow patterns): patterns that name the
// subgraphs a backend can run, their text form, and the matcher.
//
// C++ form:
//   Pattern conv = is_op("Conv")(wildcard(), is_constant()).has_attr("group", 1);
//   Pattern fused = conv.optional([](const Pattern& x) { return is_op("Relu")(x); });
//   Pattern addmul = is_op("Add", "Mul")(wildcard(), wildcard()).has_dtype(DType::f32);
//   Pattern mm = is_op("MatMul")(wildcard().has_rank(2), wildcard().has_rank(2));
//   Pattern either = mm | is_op("Gemm");
// A Pattern is an immutable value; copies share structure. A pattern object used in two places
// is the SAME pattern (TVM semantics): `auto x = wildcard(); is_op("Mul")(x, x)` matches only a
// Mul whose two inputs are the same value.
//
// Text form (so patterns can cross the C ABI, see backend_plugin.h); print(parse(s)) == s for
// text in the canonical form the printer writes:
//   *                      any value (wildcard)
//   const                  a constant value
//   Relu                   a node of operator Relu, inputs unconstrained (all external)
//   (Conv * const)         a Conv node whose inputs match `*` and `const`, in order; the number of
//                          inputs must be equal (trailing absent optional inputs do not count).
//                          For commutative operators the first two inputs may match swapped.
//                          An absent optional input before the last one matches only a bare *.
//   ()                     not allowed; `(ConstantOfShape)` is a node with no inputs
//   (Add|Mul * *)          either operator
//   (Relu? p)              optional: Relu(p), or else p itself; `(BiasAdd? p *)` - the optional
//                          operator's FIRST input is the pattern it wraps (C++ p.optional(fn))
//   (| p q ...)            alternatives, tried in order (C++ p | q)
//   $0=p ... $0            a labelled pattern and a later reference to the same pattern object
//   p[preds]               predicates on the value p matches, comma-separated:
//                            dtype=f32   rank=2   shape=1x?x3x3 (? any extent; `scalar`)
//                            fusion=elementwise  (the producing operator's fusion_kind_name,
//                                                 e.g. out-elementwise-fusable)
//                            attr.group=1  attr.auto_pad="NOTSET"  attr.strides=[2,2]
//                            attr.alpha=0.5  attr.scales=[1.0,2.0]  (floats always carry a '.'
//                            or an exponent; strings are double-quoted with \" and \\ escapes)
//   e.g. (Relu? (Add (Conv * const)[attr.group=1] *))    (MatMul *[rank=2] *[rank=2])[dtype=f32]
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/dtype.h"
#include "collage/graph.h"
#include "collage/op.h"
#include "collage/subgraph.h"

namespace collage {

struct PatternNode;  // private to the implementation (lib/backends/pattern_node.h)

// An attribute value a pattern compares against. Integers also match float fields of equal
// value; float values are compared after rounding to the field's float precision.
using PatternAttr =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

class Pattern {
 public:
  // An operator pattern's inputs: is_op("Conv")(wildcard(), is_constant()). Only operator
  // patterns take inputs (asserts otherwise: patterns are written by backend authors, and text
  // from elsewhere goes through parse_pattern, which reports errors).
  template <typename... Args>
  Pattern operator()(const Args&... args) const {
    return with_inputs(std::vector<Pattern>{args...});
  }
  Pattern with_inputs(std::vector<Pattern> inputs) const;

  // Predicates on the matched value. Each returns a new pattern (this one is unchanged).
  Pattern has_attr(std::string name, PatternAttr value) const;
  template <typename T>
  requires std::is_integral_v<T> Pattern has_attr(std::string name, T value)
  const { return has_attr(std::move(name), PatternAttr(static_cast<int64_t>(value))); }
  Pattern has_attr(std::string name, double value) const {
    return has_attr(std::move(name), PatternAttr(value));
  }
  Pattern has_attr(std::string name, const char* value) const {
    return has_attr(std::move(name), PatternAttr(std::string(value)));
  }
  Pattern has_attr(std::string name, std::initializer_list<int64_t> value) const {
    return has_attr(std::move(name), PatternAttr(std::vector<int64_t>(value)));
  }
  Pattern has_dtype(DType dtype) const;
  Pattern has_rank(int64_t rank) const;
  // -1 in `shape` matches any extent.
  Pattern has_shape(Shape shape) const;
  // The fusion kind of the operator producing the value (no match for inputs and constants).
  Pattern has_fusion_kind(FusionKind kind) const;

  // fn(*this), or else *this: p.optional([](const Pattern& x) { return is_op("Relu")(x); }).
  Pattern optional(const std::function<Pattern(const Pattern&)>& fn) const;
  // Alternatives: the first that matches wins.
  Pattern operator|(const Pattern& other) const;

  // The canonical text form (see above).
  std::string to_string() const;
  // Identity of this pattern object, the key of PatternMatch bindings.
  const PatternNode* id() const { return node_.get(); }
  const std::shared_ptr<const PatternNode>& node() const { return node_; }

  explicit Pattern(std::shared_ptr<const PatternNode> node) : node_(std::move(node)) {}

 private:
  std::shared_ptr<const PatternNode> node_;
};

Pattern wildcard();
Pattern is_constant();
// A node of any of the named operators: is_op("Add", "Mul").
Pattern is_op(std::vector<std::string> names);
template <typename... More>
Pattern is_op(std::string name, More... more) {
  return is_op(std::vector<std::string>{std::move(name), std::string(more)...});
}

// Parses the text form. InvalidArgument naming the offset and what was expected.
absl::StatusOr<Pattern> parse_pattern(std::string_view text);

// What one pattern node was bound to in a match.
struct PatternBinding {
  const PatternNode* pattern = nullptr;
  ValueId value = kNoValue;
  NodeId node = -1;  // producing node when an operator pattern matched, else -1
};

// A successful match: a group of nodes whose only values used outside are the root's outputs.
struct PatternMatch {
  NodeId root = -1;
  NodeSet nodes;
  // Values the matched nodes read from outside the match (graph inputs, constants, outputs of
  // other nodes), deduplicated, in order of first use by the nodes in topological order.
  std::vector<ValueId> inputs;
  std::vector<PatternBinding> bindings;

  // The value / node a pattern object was bound to; kNoValue / -1 when it took no part.
  ValueId value_of(const Pattern& p) const;
  NodeId node_of(const Pattern& p) const;
};

// Matches `pattern` with its top rooted at node `root` (the top pattern must match one of the
// root's outputs by matching the root node itself). A match whose intermediate values (outputs of
// matched nodes other than the root) are read outside the match, or are graph outputs, is
// rejected; when several ways to match exist (alternatives, commutative inputs) the first valid
// one in pattern order is returned.
std::optional<PatternMatch> match(const Graph& g, const Pattern& pattern, NodeId root);
// Every match, one per root node at most, in topological order of the roots.
std::vector<PatternMatch> find_matches(const Graph& g, const Pattern& pattern);

}  // namespace collage
