// Chains of nodes the cuda backend runs.
#include "cuda_chains.h"

#include <set>

#include "cuda_lowering.h"

namespace collage::cuda_backend {

std::vector<NodeSet> chains(const Graph& g, int max_depth) {
  const size_t n = g.nodes().size();
  std::vector<bool> runs(n);
  for (size_t i = 0; i < n; ++i) runs[i] = check_node(g, g.node(static_cast<NodeId>(i))).ok();
  std::set<NodeSet> out;
  for (size_t start = 0; start < n; ++start) {
    if (!runs[start]) continue;
    NodeSet s(n);
    NodeId at = static_cast<NodeId>(start);
    for (int depth = 0; depth < max_depth; ++depth) {
      s.insert(at);
      out.insert(s);
      const std::vector<ValueId>& outs = g.node(at).outputs;
      if (outs.size() != 1 || g.users()[outs[0]].size() != 1) break;
      const NodeId next = g.users()[outs[0]][0];
      if (!runs[next]) break;
      at = next;
    }
  }
  return {out.begin(), out.end()};
}

}  // namespace collage::cuda_backend
