// Attribute structs of the text operators: TfIdfVectorizer, the string operators and LabelEncoder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collage/attrs.h"
#include "collage/tensor.h"

namespace collage {

// TfIdfVectorizer(X [C] or [B, C], integers) -> f32 [out] or [B, out]: counts the n-grams of
// pool_int64s (ngram_counts[n-1] is where the n-grams start; n from min_gram_length to
// max_gram_length, items up to max_skip_count apart) into the output slots ngram_indexes names;
// mode "TF" (counts), "IDF" (weights where the count is positive) or "TFIDF" (counts times
// weights; no weights means 1). String pools are not supported.
struct TfIdfVectorizerAttrs : AttrsOf<TfIdfVectorizerAttrs> {
  int64_t max_gram_length = 0;
  int64_t max_skip_count = 0;
  int64_t min_gram_length = 0;
  std::string mode;
  std::vector<int64_t> ngram_counts;
  std::vector<int64_t> ngram_indexes;
  std::vector<int64_t> pool_int64s;
  std::string pool_strings;  // comma-joined as imported; refused when given
  std::vector<float> weights;
  template <class V>
  void fields(V& v) {
    v.field("max_gram_length", max_gram_length);
    v.field("max_skip_count", max_skip_count);
    v.field("min_gram_length", min_gram_length);
    v.field("mode", mode);
    v.field("ngram_counts", ngram_counts);
    v.field("ngram_indexes", ngram_indexes);
    v.field("pool_int64s", pool_int64s);
    v.field("pool_strings", pool_strings);
    v.field("weights", weights);
  }
};

// The string operators take and make `str` tensors (UTF-8 byte strings); they run in the
// reference executor only (docs/onnx.md). StringConcat(X, Y) -> str and StringEqual(X, Y) -> bool
// (ONNX Equal on strings) broadcast like numpy and have no attributes.

// RegexFullMatch(X str) -> bool: whether each whole element matches `pattern` (RE2 syntax, as in
// ONNX Runtime). A pattern RE2 rejects is an error naming the node and RE2's reason.
struct RegexFullMatchAttrs : AttrsOf<RegexFullMatchAttrs> {
  std::string pattern;
  template <class V>
  void fields(V& v) {
    v.field("pattern", pattern);
  }
};

// StringSplit(X str) -> (Y str [X..., n], Z i64 [X...]): each element split at `delimiter` (an
// empty delimiter splits at runs of ASCII whitespace and drops empty pieces), at most `maxsplit`
// times (-1: no limit), as Python's str.split (ONNX's reference implementation); Y's last axis is as long as the most pieces, padded with empty strings, Z counts
// each element's pieces. n depends on the values, so it is a run-time dimension unless X is a
// constant.
struct StringSplitAttrs : AttrsOf<StringSplitAttrs> {
  std::string delimiter;
  int64_t maxsplit = -1;
  template <class V>
  void fields(V& v) {
    v.field("delimiter", delimiter);
    v.field("maxsplit", maxsplit);
  }
};

// StringNormalizer(X str [C] or [1, C]) -> str [C'] or [1, C']: drops the elements found in
// `stopwords` (compared ignoring case unless is_case_sensitive), then changes case
// ("NONE", "LOWER", "UPPER"; full Unicode simple case mapping of UTF-8 text). When every element
// is dropped the output is one empty string. C' depends on the values (a run-time dimension
// unless X is a constant).
struct StringNormalizerAttrs : AttrsOf<StringNormalizerAttrs> {
  std::string case_change_action = "NONE";
  int64_t is_case_sensitive = 0;
  Tensor stopwords;  // 1-D str, or empty for none
  template <class V>
  void fields(V& v) {
    v.field("case_change_action", case_change_action);
    v.field("is_case_sensitive", is_case_sensitive);
    v.field("stopwords", stopwords);
  }
};

// LabelEncoder (ai.onnx.ml) -> values' element type, X's shape: each element of X equal to
// keys[i] becomes values[i], any other default_value[0]. keys and values are 1-D of one length
// (no key twice); keys has X's element type (str, i64, f32, ...); a float key NaN matches NaN.
struct LabelEncoderAttrs : AttrsOf<LabelEncoderAttrs> {
  Tensor keys;
  Tensor values;
  Tensor default_value;  // one element of values' type
  template <class V>
  void fields(V& v) {
    v.field("keys", keys);
    v.field("values", values);
    v.field("default_value", default_value);
  }
};

}  // namespace collage
