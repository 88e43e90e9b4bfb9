// Constant folding: evaluates nodes on known values, then stores only the values that are needed.
#include "passes/fold_constants.h"

#include <algorithm>
#include <cassert>

#include "collage/reference.h"

namespace collage::passes {
namespace {

class Folder {
 public:
  Folder(const Context& ctx, const Graph& g, const FoldConstantsOptions& options)
      : g_(g), options_(options), rb_(ctx, g), known_(g.values().size()),
        source_bytes_(g.values().size(), 0) {
    for (ValueId v = 0; v < static_cast<ValueId>(g.values().size()); ++v) {
      if (const Tensor* c = g.constant_of(v)) {
        known_[v] = *c;
        source_bytes_[v] = c->bytes();
      }
    }
  }

  PassResult run() {
    for (NodeId n = 0; n < static_cast<NodeId>(g_.nodes().size()); ++n) {
      if (try_fold(n)) continue;
      for (ValueId in : g_.node(n).inputs)
        if (absl::Status s = materialize(in); !s.ok()) return s;
      if (absl::Status s = rb_.copy_node(n); !s.ok()) return s;
    }
    for (ValueId out : g_.outputs())
      if (absl::Status s = materialize(out); !s.ok()) return s;
    if (rb_.num_nodes() == g_.nodes().size()) return std::nullopt;
    auto out = rb_.finish();
    if (!out.ok()) return out.status();
    return std::optional<Graph>(std::move(*out));
  }

 private:
  // Evaluates node n when its inputs are known (or, for a shape-only operator, have static
  // shapes), recording its outputs as known values. False when it cannot or should not fold.
  bool try_fold(NodeId n) {
    const Node& node = g_.node(n);
    for (ValueId out : node.outputs)
      if (g_.value(out).type.bytes() > options_.max_folded_bytes) return false;
    std::vector<Tensor> inputs;
    size_t source = 0;
    for (ValueId in : node.inputs) {
      if (in == kNoValue) {
        inputs.emplace_back();
      } else if (!known_[in].empty()) {
        inputs.push_back(known_[in]);
        if (!node.op->shape_only) source += source_bytes_[in];
      } else if (node.op->shape_only && !g_.value(in).type.is_dynamic() &&
                 g_.value(in).type.bytes() <= options_.max_folded_bytes) {
        // Only the shape is read; zeros of the right type stand in for the values.
        inputs.emplace_back(g_.value(in).type.dtype, g_.value(in).type.shape);
      } else {
        return false;
      }
    }
    auto outs = evaluate_op(*node.op, *node.attrs, inputs, node.name,
                            static_cast<int>(node.outputs.size()));
    if (!outs.ok() || outs->size() != node.outputs.size()) return false;
    for (size_t i = 0; i < outs->size(); ++i) {
      // A value whose shape depended on data gets the shape it has (the nodes after it are
      // inferred again as the graph is rebuilt).
      if (!type_fits((*outs)[i].type(), g_.value(node.outputs[i]).type)) return false;
    }
    for (size_t i = 0; i < outs->size(); ++i) {
      known_[node.outputs[i]] = std::move((*outs)[i]);
      source_bytes_[node.outputs[i]] = source;
    }
    return true;
  }

  // Gives source value v a value in the new graph: a constant when v is known and small enough,
  // otherwise the node that computes it, its own inputs materialised first.
  absl::Status materialize(ValueId v) {
    if (v == kNoValue || rb_.has(v)) return absl::OkStatus();
    const Value& val = g_.value(v);
    if (val.kind == ValueKind::constant) {
      rb_.map(v);
      return absl::OkStatus();
    }
    assert(val.kind == ValueKind::node_output && !known_[v].empty());
    const size_t limit = std::max(options_.growth_allowance_bytes, source_bytes_[v]);
    if (known_[v].bytes() <= limit) {
      rb_.set(v, rb_.builder().add_constant(val.name, known_[v]));
      return absl::OkStatus();
    }
    for (ValueId in : g_.node(val.producer).inputs)
      if (absl::Status s = materialize(in); !s.ok()) return s;
    return rb_.copy_node(val.producer);
  }

  const Graph& g_;
  const FoldConstantsOptions& options_;
  GraphRebuilder rb_;
  std::vector<Tensor> known_;          // per source value: its value, when known
  std::vector<size_t> source_bytes_;   // bytes of the source constants a known value comes from
};

}  // namespace

PassResult fold_constants(const Context& ctx, const Graph& g, const FoldConstantsOptions& options) {
  return Folder(ctx, g, options).run();
}

}  // namespace collage::passes
