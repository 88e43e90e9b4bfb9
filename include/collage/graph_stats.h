// Size and cost summaries of a graph: operator counts, parameter count, floating-point operations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collage/graph.h"

namespace collage {

// Per-operator totals over the nodes of a graph.
struct OpStats {
  std::string op;
  int64_t count = 0;  // nodes
  int64_t flops = 0;  // sum of node_flops() over those nodes
};

struct GraphStats {
  int64_t nodes = 0;
  int64_t parameters = 0;       // elements of all constants (weights, biases, tables)
  int64_t parameter_bytes = 0;  // their storage in bytes
  int64_t flops = 0;            // total over all nodes
  std::vector<OpStats> ops;     // most frequent operator first; ties in name order
};

// Floating-point operations of one node of `g`, from its input and output types:
//   Conv, ConvTranspose, MatMul, Gemm: 2 per multiply-add (bias additions and Gemm's alpha/beta
//     scaling are not counted);
//   elementwise and broadcasting operators: 1 per output element (Identity, Dropout, Cast: 0);
//   MaxPool, AveragePool: 1 per input element read (output elements x kernel size);
//   GlobalAveragePool, ReduceMean/Sum/Max: 1 per input element;
//   BatchNormalization: 2 per element (inference scale and shift);
//   InstanceNormalization, LayerNormalization: 7 per element (mean 1, variance 2, normalise 2,
//     scale and shift 2); Softmax, LogSoftmax: 5 per element (max, subtract, exp, sum, divide);
//   Resize: 0 for "nearest", for "linear" 2 per neighbour blended (2^k neighbours when k axes
//     change size) per output element;
//   data movement (reshapes, transposes, slicing, gathers, padding, ...): 0.
// Operators not listed fall back on their fusion kind: elementwise and broadcast 1 per output
// element, reduction 1 per input element, anything else 0. Results saturate at INT64_MAX. A node
// with a dynamic dimension (kDynamicDim) counts 0: its size is known only at run time.
int64_t node_flops(const Graph& g, const Node& n);

// Operator counts, parameter totals and FLOPs of `g`.
GraphStats graph_stats(const Graph& g);

}  // namespace collage
