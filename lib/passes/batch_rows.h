// Whether a graph keeps the rows of a batch apart: row i of every output computed from row i of
// the batched inputs alone. An artifact compiled for batch B may then run a smaller batch b by
// filling rows b..B-1 with zeros and returning the outputs' first b rows (dynamic batch).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"

namespace collage {

// `input_axes` holds the batch axis of each graph input (-1: not batched). Returns the batch axis
// of each graph output (-1: the output does not depend on a batched input), or a
// FailedPrecondition error naming the first node that mixes rows or whose operator is not known
// to keep them apart (reductions or softmax over the batch axis, reshapes that merge it, shape
// values, data-dependent operators, ...). Constants may have the batch size as a dimension when
// all their rows are equal (a folded Expand of a learned token). A graph whose batch is 1 is not
// traced: its rows cannot be told from other size-1 axes.
absl::StatusOr<std::vector<int>> trace_batch_rows(const Graph& g,
                                                  const std::vector<int>& input_axes);

// The node, if any, that keeps a single row of the batch and drops the batch axis: a Gather of one
// scalar index along it (what an exporter writes for `x[0]`), traced as trace_batch_rows traces,
// up to the first node whose rows could mix. Null when there is none. Such a model computes
// from one row of a batch whatever its size.
const Node* find_batch_row_pick(const Graph& g, const std::vector<int>& input_axes);

}  // namespace collage
