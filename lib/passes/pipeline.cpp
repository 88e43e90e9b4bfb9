// The pass pipeline: one straight-line list of named passes.
#include "collage/passes.h"

#include "core/str_cat.h"
#include "passes/canonicalize.h"
#include "passes/eliminate_dead_code.h"
#include "passes/fold_batch_norm.h"
#include "passes/fold_constants.h"
#include "passes/infer_shapes.h"
#include "passes/split_dynamic_quantize.h"

namespace collage {
namespace {

// Takes a pass's result as the current graph, then reports it and, in debug builds, verifies it.
class PassRunner {
 public:
  PassRunner(const Context& ctx, const PassOptions& options, Graph& g)
      : ctx_(ctx), options_(options), g_(g) {}

  absl::Status operator()(std::string_view name, passes::PassResult result) {
    if (!result.ok()) return result.status();
    if (result->has_value()) g_ = std::move(**result);
#ifndef NDEBUG
    if (absl::Status s = verify_graph(ctx_, g_); !s.ok())
      return absl::InternalError(str_cat("after pass ", name, ": ", s.message()));
#endif
    if (options_.after_pass) options_.after_pass(name, g_);
    return absl::OkStatus();
  }

 private:
  const Context& ctx_;
  const PassOptions& options_;
  Graph& g_;
};

}  // namespace

absl::StatusOr<Graph> run_passes(const Context& ctx, const Graph& input, const PassOptions& options) {
  Graph g = input;
  PassRunner run(ctx, options, g);
  absl::Status s = run("infer_shapes", passes::infer_shapes(ctx, g));
  if (s.ok() && options.fold_constants) {
    passes::FoldConstantsOptions fold;
    fold.max_folded_bytes = options.max_folded_bytes;
    s = run("fold_constants", passes::fold_constants(ctx, g, fold));
  }
  if (s.ok() && options.canonicalize) s = run("canonicalize", passes::canonicalize(ctx, g));
  if (s.ok() && options.fold_batch_norm)
    s = run("fold_batch_norm", passes::fold_batch_norm(ctx, g));
  if (s.ok() && options.split_dynamic_quantize)
    s = run("split_dynamic_quantize", passes::split_dynamic_quantize(ctx, g));
  if (s.ok() && options.eliminate_dead_code)
    s = run("eliminate_dead_code", passes::eliminate_dead_code(ctx, g));
  if (!s.ok()) return s;
  return g;
}

}  // namespace collage
