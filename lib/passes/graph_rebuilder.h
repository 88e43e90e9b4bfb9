// GraphRebuilder: copies a graph into a new one node by node, the way every pass builds its result.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"

namespace collage::passes {

// What a pass returns: the rewritten graph, or nullopt when the pass changed nothing, so the caller
// keeps its input (Halide's `same_as`) and can tell cheaply whether anything happened.
using PassResult = absl::StatusOr<std::optional<Graph>>;

// Builds a new graph from a source graph. The new graph starts with the source's name and inputs
// (same names and types, same order); the pass then copies, replaces or drops each source node and
// records which new value stands for which source value. Shape inference runs again on every node
// added, so a rewrite that produces a wrong type fails where it happens.
class GraphRebuilder {
 public:
  GraphRebuilder(const Context& ctx, const Graph& source);

  const Graph& source() const { return src_; }
  GraphBuilder& builder() { return b_; }

  // True when source value `old` has a value in the new graph (constants count once copied).
  bool has(ValueId old) const { return map_[old] != kNoValue; }
  // The new graph's value for source value `old`. A source constant is copied on first use, so
  // constants that nothing reads any more are left behind. A node output must have been mapped.
  ValueId map(ValueId old);
  std::vector<ValueId> map_all(const std::vector<ValueId>& old);
  // Records that new value `now` stands for source value `old`.
  void set(ValueId old, ValueId now) { map_[old] = now; }

  // Re-adds source node `n` with mapped inputs and the same operator, attributes and names.
  absl::Status copy_node(NodeId n);
  // Adds a node that stands for source node `replaced`: its outputs take the names of
  // `replaced`'s outputs and are mapped to them. `inputs` are new-graph values.
  absl::StatusOr<std::vector<ValueId>> add_node_for(NodeId replaced, std::string node_name,
                                                    std::string_view op,
                                                    std::vector<ValueId> inputs,
                                                    std::shared_ptr<const OpAttrs> attrs);

  // Nodes added to the new graph so far.
  size_t num_nodes() const { return num_nodes_; }

  // Adds the source's outputs (mapped, in order) and returns the new graph.
  absl::StatusOr<Graph> finish();

 private:
  const Graph& src_;
  GraphBuilder b_;
  std::vector<ValueId> map_;
  size_t num_nodes_ = 0;
};

}  // namespace collage::passes
