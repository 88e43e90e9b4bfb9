// TfIdfVectorizer on integer tokens (ONNX 9), shared by the reference kernel (lib/ops/text_tfidf.cpp)
// and the runtime's dynamic module: the n-gram pool and the counting, header-only.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace collage::rt_dynamic {

enum class TfIdfMode : int64_t { tf, idf, tfidf };

// The operator's attributes, the mode as its code.
struct TfIdfSpec {
  TfIdfMode mode = TfIdfMode::tf;
  int64_t min_gram_length = 0, max_gram_length = 0, max_skip_count = 0;
  std::vector<int64_t> ngram_counts, ngram_indexes, pool_int64s;
  std::vector<float> weights;
};

// The pool's n-grams (of the sizes counted) by their id (their place in the pool, from 0), and
// every prefix of them, which is how far a walk along the input may go.
struct TfIdfPool {
  std::map<std::vector<int64_t>, int64_t> ids;
  std::set<std::vector<int64_t>> prefixes;
};

// Builds the pool of `a` into `p`; empty string on success, else what is wrong.
inline std::string build_tfidf_pool(const TfIdfSpec& a, TfIdfPool& p) {
  const auto total = static_cast<int64_t>(a.pool_int64s.size());
  int64_t id = 0;
  for (size_t i = 0; i < a.ngram_counts.size(); ++i) {
    const int64_t n = static_cast<int64_t>(i) + 1;
    const int64_t start = a.ngram_counts[i];
    const int64_t end = i + 1 < a.ngram_counts.size() ? a.ngram_counts[i + 1] : total;
    if (start < 0 || end > total || end < start || (end - start) % n)
      return "ngram_counts does not split pool_int64s into n-grams";
    for (int64_t k = start; k < end; k += n, ++id) {
      if (n < a.min_gram_length || n > a.max_gram_length) continue;
      std::vector<int64_t> gram(a.pool_int64s.begin() + k, a.pool_int64s.begin() + k + n);
      p.ids[gram] = id;
      for (int64_t len = 1; len <= n; ++len) p.prefixes.insert({gram.begin(), gram.begin() + len});
    }
  }
  if (id != static_cast<int64_t>(a.ngram_indexes.size()))
    return "ngram_indexes has " + std::to_string(a.ngram_indexes.size()) + " entries for " +
           std::to_string(id) + " n-grams";
  return "";
}

// y[rows x out] from `rows` rows of `cols` tokens (token(i) reads element i of the input): each
// n-gram's count, weighted as the mode says. Every ngram_indexes entry must be in [0, out) and
// `weights` empty or of at least `out` entries (the callers check both).
template <typename Token>
void tfidf_count(const TfIdfSpec& a, const TfIdfPool& pool, int64_t rows, int64_t cols,
                 int64_t out, Token token, float* y) {
  std::vector<int64_t> counts(static_cast<size_t>(rows * out), 0);
  std::vector<int64_t> gram;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t min_n = a.min_gram_length;
    for (int64_t skip = 1; skip <= a.max_skip_count + 1; ++skip) {
      for (int64_t start = 0; start < cols; ++start) {
        if (start + skip * (min_n - 1) >= cols) break;
        gram.clear();
        for (int64_t at = start; at < cols && static_cast<int64_t>(gram.size()) < a.max_gram_length;
             at += skip) {
          gram.push_back(token(r * cols + at));
          if (!pool.prefixes.count(gram)) break;
          auto hit = pool.ids.find(gram);
          if (hit != pool.ids.end() && static_cast<int64_t>(gram.size()) >= min_n)
            ++counts[r * out + a.ngram_indexes[hit->second]];
        }
      }
      // Unigrams are counted once, not once per skip distance.
      if (min_n == 1 && ++min_n > a.max_gram_length) break;
    }
  }
  for (size_t i = 0; i < counts.size(); ++i) {
    const double w = a.weights.empty() ? 1.0 : a.weights[i % out];
    const double c = static_cast<double>(counts[i]);
    y[i] = static_cast<float>(a.mode == TfIdfMode::tf    ? c
                              : a.mode == TfIdfMode::idf ? (c > 0 ? w : 0.0)
                                                         : c * w);
  }
}

}  // namespace collage::rt_dynamic
