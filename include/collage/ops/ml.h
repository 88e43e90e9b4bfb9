// Attribute structs of the operators added for ai.onnx.ml models that no default-domain
// operator expresses (SVMPairwiseCoupling).
// Field names are the ONNX attribute names where there is one.
#pragma once

#include <cstdint>

#include "collage/attrs.h"

namespace collage {

// SVMPairwiseCoupling(r) -> f32 [batch, classes]: libsvm's multi-class probabilities from the
// pairwise ones, as ONNX Runtime's SVMClassifier computes them (runtime/algorithms/
// pairwise_coupling.h). r: f32 [batch, classes (classes - 1) / 2], the probability that class i
// beats class j for the pairs i < j in order (0,1), (0,2), ..., (1,2), ...
struct PairwiseCouplingAttrs : AttrsOf<PairwiseCouplingAttrs> {
  int64_t classes = 2;
  template <class V>
  void fields(V& v) {
    v.field("classes", classes);
  }
};

}  // namespace collage
