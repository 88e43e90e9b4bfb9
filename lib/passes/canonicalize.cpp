// Canonicalisation: the LayerNorm and GELU patterns applied in one rewrite sweep.
#include "passes/canonicalize.h"

#include "passes/canonical_patterns.h"

namespace collage::passes {

PassResult canonicalize(const Context& ctx, const Graph& g, const RewriteOptions& options) {
  std::vector<RewritePattern> patterns = layer_norm_patterns();
  for (RewritePattern& p : gelu_patterns()) patterns.push_back(std::move(p));
  return apply_rewrites(ctx, g, patterns, options);
}

}  // namespace collage::passes
