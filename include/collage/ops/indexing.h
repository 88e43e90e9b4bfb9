// Attribute structs of the indexing operators added for ONNX coverage (Trilu, CumSum, GatherND,
// ScatterElements, ScatterND, TensorScatter, EyeLike). Field names are the ONNX attribute names.
#pragma once

#include <cstdint>
#include <string>

#include "collage/attrs.h"

namespace collage {

// Trilu(X, [k]): keeps the upper (j - i >= k) or lower (j - i <= k) triangle of each matrix of
// the last two axes and zeroes the rest; k (an i64 scalar input, read at run time) defaults to 0.
struct TriluAttrs : AttrsOf<TriluAttrs> {
  int64_t upper = 1;
  template <class V>
  void fields(V& v) {
    v.field("upper", upper);
  }
};

// CumSum(X, axis) and CumProd(X, axis): running sums (products) along `axis` (an integer scalar
// input, read at run time); exclusive leaves each element out of its own sum, reverse runs from
// the end.
struct CumSumAttrs : AttrsOf<CumSumAttrs> {
  int64_t exclusive = 0;
  int64_t reverse = 0;
  template <class V>
  void fields(V& v) {
    v.field("exclusive", exclusive);
    v.field("reverse", reverse);
  }
};

// GatherND(data, indices): the slices of data named by the last axis of indices (i64), the first
// batch_dims axes shared by both.
struct GatherNDAttrs : AttrsOf<GatherNDAttrs> {
  int64_t batch_dims = 0;
  template <class V>
  void fields(V& v) {
    v.field("batch_dims", batch_dims);
  }
};

// ScatterElements(data, indices, updates) along `axis` and ScatterND(data, indices, updates):
// a copy of data with the updates written (reduction "none"), or combined with "add", "mul",
// "max" or "min", at the places indices name (negative counts from the end).
struct ScatterAttrs : AttrsOf<ScatterAttrs> {
  int64_t axis = 0;
  std::string reduction = "none";
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
    v.field("reduction", reduction);
  }
};

// TensorScatter(past_cache, update, [write_indices]) (version 24): a copy of the cache with the
// update written along `axis` from each batch's write index (0 when absent); mode "circular"
// wraps the positions around the axis, "linear" requires them to fit.
struct TensorScatterAttrs : AttrsOf<TensorScatterAttrs> {
  int64_t axis = -2;
  std::string mode = "linear";
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
    v.field("mode", mode);
  }
};

// EyeLike(X): ones on diagonal k of a matrix shaped like X, zeros elsewhere; `dtype` is the
// output's element type as dtype_name() writes it (empty: X's).
struct EyeLikeAttrs : AttrsOf<EyeLikeAttrs> {
  std::string dtype;
  int64_t k = 0;
  template <class V>
  void fields(V& v) {
    v.field("dtype", dtype);
    v.field("k", k);
  }
};

}  // namespace collage
