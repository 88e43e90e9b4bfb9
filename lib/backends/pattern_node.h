// The nodes behind collage::Pattern, shared by the builder, the printer, the parser and the
// matcher.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/pattern.h"

namespace collage {

enum class PatternKind : uint8_t { wildcard, constant, op, alternative };

// One predicate on the matched value.
struct PatternPredicate {
  enum class Kind : uint8_t { dtype, rank, shape, fusion, attr };
  Kind kind = Kind::dtype;
  DType dtype = DType::f32;
  int64_t rank = 0;
  Shape shape;  // -1: any extent
  FusionKind fusion = FusionKind::opaque;
  std::string attr_name;
  PatternAttr attr_value;
};

struct PatternNode {
  PatternKind kind = PatternKind::wildcard;
  // op: operator names (any of them matches); inputs, unless `any_inputs`.
  std::vector<std::string> names;
  bool any_inputs = true;
  std::vector<std::shared_ptr<const PatternNode>> inputs;
  // alternative: first, then second. `optional` marks the p.optional(fn) form, where `first` is
  // fn(p) and `second` is p.
  std::shared_ptr<const PatternNode> first, second;
  bool optional = false;
  std::vector<PatternPredicate> predicates;
};

}  // namespace collage
