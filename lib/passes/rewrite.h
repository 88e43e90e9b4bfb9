// Typed rewrite patterns over the graph IR, the driver that applies them, and matching helpers.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "passes/graph_rebuilder.h"

namespace collage::passes {

// A successful match: the source nodes a rewrite replaces and how to build the replacement.
struct RewriteMatch {
  // Every node replaced, the root included. The root is the last of them in topological order;
  // the outputs of the others must have no reader outside the match (the driver checks this).
  std::vector<NodeId> nodes;
  // Adds the replacement at the root's place. It must map every output of the root (usually
  // through GraphRebuilder::add_node_for) and reads source values through GraphRebuilder::map.
  std::function<absl::Status(GraphRebuilder&)> emit;
};

// A match, or the reason there is none (MLIR's notifyMatchFailure), for tests and debugging.
struct MatchResult {
  std::optional<RewriteMatch> match;
  std::string failure;
};
inline MatchResult no_match(std::string why) { return {std::nullopt, std::move(why)}; }

// A rewrite rooted at one operator: `match` is tried on every node whose operator is `root_op`.
struct RewritePattern {
  std::string name;
  std::string root_op;
  int benefit = 1;  // on the same root, patterns with a higher benefit are tried first
  std::function<MatchResult(const Graph& g, NodeId root)> match;
};

struct RewriteOptions {
  // Called whenever a pattern is tried on a root and does not match.
  std::function<void(const RewritePattern& pattern, const Node& root, std::string_view why)>
      on_failure;
};

// Applies the patterns in one sweep from the graph's outputs towards its inputs, so that the
// largest match (the one rooted latest) claims its nodes first. Matches never overlap. The
// replacements are single operators that no pattern looks inside, so one sweep reaches the fixed
// point. Returns nullopt when nothing matched.
PassResult apply_rewrites(const Context& ctx, const Graph& g,
                          std::span<const RewritePattern> patterns,
                          const RewriteOptions& options = {});

// --- Matching helpers -------------------------------------------------------------------------

// The node producing `v` when its operator is `op`, else null.
const Node* producer_of(const Graph& g, ValueId v, std::string_view op);
// For a constant whose elements are all equal (a scalar in any shape), that value.
std::optional<double> uniform_constant(const Graph& g, ValueId v);
// True when `v` is a uniform constant within rel_tol (relative) of `expected`.
bool constant_near(const Graph& g, ValueId v, double expected, double rel_tol);

// The id of a node of `g` from a reference to it.
NodeId node_id(const Graph& g, const Node& n);
// The operand orders worth trying for a binary node: as written, plus swapped when the operator
// is commutative.
std::vector<std::pair<ValueId, ValueId>> operand_orders(const Node& binary);
// The operands of a binary node split into a constant and the other one (constant second, or
// first when the node is commutative). Null when neither operand is a constant.
struct ConstantOperand {
  ValueId other;
  ValueId constant;
};
std::optional<ConstantOperand> constant_operand(const Graph& g, const Node& binary);

// "<Op> '<node>': <why>", the prefix every failure reason uses.
std::string failure_at(const Node& n, std::string_view why);

}  // namespace collage::passes
