// Sets of nodes of a graph (candidate groups for backends), convexity, extraction into a
// standalone graph, and canonical signatures used as cost-database keys.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"

namespace collage {

// A set of node ids of one graph, as a bit set (nodes are topologically ordered, so "first node"
// is well defined).
class NodeSet {
 public:
  NodeSet() = default;
  explicit NodeSet(size_t num_nodes) : size_(num_nodes), words_((num_nodes + 63) / 64, 0) {}
  static NodeSet of(size_t num_nodes, const std::vector<NodeId>& nodes);

  size_t universe() const { return size_; }
  void insert(NodeId n) { words_[n >> 6] |= uint64_t{1} << (n & 63); }
  void erase(NodeId n) { words_[n >> 6] &= ~(uint64_t{1} << (n & 63)); }
  bool contains(NodeId n) const { return (words_[n >> 6] >> (n & 63)) & 1; }
  bool empty() const;
  size_t count() const;
  // Smallest node id in the set, or -1.
  NodeId first() const;
  // Smallest node id NOT in the set, or -1 when every node is in it.
  NodeId first_missing() const;
  bool intersects(const NodeSet& o) const;
  bool is_subset_of(const NodeSet& o) const;
  NodeSet& operator|=(const NodeSet& o);
  NodeSet& operator&=(const NodeSet& o);
  NodeSet operator|(const NodeSet& o) const { NodeSet r = *this; return r |= o; }
  NodeSet operator&(const NodeSet& o) const { NodeSet r = *this; return r &= o; }
  NodeSet minus(const NodeSet& o) const;
  bool operator==(const NodeSet& o) const = default;
  bool operator<(const NodeSet& o) const { return words_ < o.words_; }
  std::vector<NodeId> to_vector() const;
  uint64_t hash() const;
  const std::vector<uint64_t>& words() const { return words_; }

 private:
  size_t size_ = 0;
  std::vector<uint64_t> words_;
};

// Reachability facts about a graph, computed once: for each node, the set of nodes reachable
// from it (its descendants, itself excluded).
class GraphReachability {
 public:
  explicit GraphReachability(const Graph& g);
  const NodeSet& descendants(NodeId n) const { return desc_[n]; }
  // True when no path leaves `s` and re-enters it (a group can then run as one kernel).
  bool is_convex(const NodeSet& s) const;
  size_t num_nodes() const { return desc_.size(); }

 private:
  std::vector<NodeSet> desc_;
};

// A group cut out of its graph as a standalone graph: values read from outside (except constants,
// which are copied by reference) become inputs, values used outside the group or returned by the
// parent graph become outputs. The mapping back to the parent is kept. `layouts` (one per parent
// value, or empty for all plain) gives the inputs and outputs their layouts; the graph check
// refuses a layout that does not fit its value.
struct ExtractedSubgraph {
  Graph graph;
  std::vector<ValueId> parent_inputs;   // parent value of each subgraph input, in order
  std::vector<ValueId> parent_outputs;  // parent value of each subgraph output, in order
};
absl::StatusOr<ExtractedSubgraph> extract_subgraph(const Context& ctx, const Graph& parent,
                                                   const NodeSet& nodes,
                                                   std::span<const Layout> layouts = {});

// Canonical text of a standalone graph independent of value/node names and constant contents:
// operators, attributes, types, wiring and constant types. Structurally identical groups have
// the same signature; it is the subgraph part of a cost-database key.
std::string canonical_signature(const Graph& g);
// 64-bit FNV-1a of a string, stable across processes.
uint64_t stable_hash(std::string_view s);

}  // namespace collage
