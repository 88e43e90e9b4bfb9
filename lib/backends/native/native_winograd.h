// The Winograd choice of the native backend: which groups have a Winograd form (one Conv anchor,
// 3 x 3, stride 1, dilation 1, one group, a constant weight), the operator library that builds
// them that way, and the timing that decides between it and the direct kernel.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/graph.h"
#include "collage/kernel.h"
#include "collage/te_ops.h"

namespace collage::native {

// Whether `group` is anchored at a single Conv that has a Winograd form with a constant weight.
bool winograd_group(const Graph& group);

// What the choice between the direct and the Winograd kernels of such a group depends on: the
// convolution's shapes and attributes and the layouts of its data input and of the group's
// outputs, not the elementwise chain fused after it (so that the candidates of one convolution
// with different epilogues share one measurement). Empty when winograd_group(group) is false.
std::string winograd_choice_key(const Graph& group);

// `ops` with Conv replaced by the Winograd definition of `tile` x `tile` output tiles.
std::shared_ptr<const te_ops::TeOpRegistry> winograd_ops(const te_ops::TeOpRegistry& ops, int tile);

// The index of the kernel of `kernels` (at least one, each built for `group`) that ran fastest on
// this machine: run on the same random inputs, every task on the calling thread (total CPU time,
// not the spread over threads), in turns, the medians of five turns after a warm-up compared.
size_t fastest(const Graph& group, const std::vector<Kernel*>& kernels);

}  // namespace collage::native
