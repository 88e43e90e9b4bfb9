// Attribute struct of TfIdfVectorizer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collage/attrs.h"

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

}  // namespace collage
