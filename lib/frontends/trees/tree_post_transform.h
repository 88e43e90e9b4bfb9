// The ai.onnx.ml post transforms that no single graph operator computes (SOFTMAX_ZERO, PROBIT),
// as small graphs of elementwise and reduction nodes, with ONNX Runtime's arithmetic (which the
// ONNX reference implementation shares).
#pragma once

#include "collage/graph.h"
#include "frontends/trees/tree_program.h"

namespace collage::trees {

// Softmax over axis 1 of `y` (f32 [batch, n]) in which the entries within 1e-7 of zero stay zero
// and take no part in the sum: exp(y - max(y)) / sum over the nonzero entries. A row of zeros
// gives NaN, as in ONNX Runtime.
ValueId add_softmax_zero(Emitter& e, ValueId y);

// sqrt(2) * erfinv(2y - 1), the inverse of the standard normal CDF, with erfinv by Winitzki's
// approximation (a = 0.147) as ONNX Runtime computes it, arranged without its cancellation near
// y = 0.5 (ONNX Runtime's float32 result is up to 6e-5 off the formula there); NaN outside
// [0, 1], -inf/inf at 0/1.
ValueId add_probit(Emitter& e, ValueId y);

// The post transform `post` (an ai.onnx.ml name: NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO, PROBIT)
// of the scores `y` (f32 [batch, n]) over axis 1; `y` itself for NONE.
ValueId add_ml_post_transform(Emitter& e, const std::string& post, ValueId y);

// True for the five names add_ml_post_transform takes.
bool is_ml_post_transform(const std::string& post);

}  // namespace collage::trees
