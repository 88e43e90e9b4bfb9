// The native backend (TVM's column in Collage): any subgraph of the operators the TE operator
// library defines, lowered to tensor expressions, scheduled (an anchor's tuned schedule or the
// default injective/reduction schedule) and compiled to machine code with LLVM. Its candidates
// come from a fusion rule like Collage's default pattern generator (an anchor followed along its
// single-use chain by the operators its fusion kind allows, up to RuleOptions::max_depth nodes)
// plus one single-node candidate per supported node, so it can run any whole graph.
//
// Kernel records: module "native", entry the kernel's symbol, params the bytes of a relocatable
// object file defining it (linked into an artifact's native code), constants the group's
// constants and pre-packed weights. A native kernel's arguments are the group's inputs, then its
// outputs, then the record's constants.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collage/backend.h"

namespace collage {

namespace te_ops {
class TeOpRegistry;
}
namespace tune {
class TuningLog;
}

inline constexpr std::string_view kNativeBackend = "native";

// How the native backend builds 3 x 3, stride-1, dilation-1 convolutions of one group with a
// constant weight: `measure` builds the direct kernel and the Winograd ones, F(4x4, 3x3) and
// F(2x2, 3x3) (the weight transformed once at build time, the input per tile of outputs, a
// batched GEMM per transform point), and keeps the one that runs fastest on this machine; `off`
// the direct one only; `always` the Winograd one of NativeBackendOptions::winograd_tile.
enum class NativeWinograd : uint8_t { off, measure, always };

struct NativeBackendOptions {
  // The operators the backend runs and their schedules; null: te_ops::default_te_ops(). Users
  // add their own operators' computes here (see examples/te/te_custom_op.cpp).
  std::shared_ptr<const te_ops::TeOpRegistry> ops;
  // Tuned schedule knobs for anchor operators; null: default knobs. Must outlive the backend.
  const tune::TuningLog* tuning = nullptr;
  // A kernel's parallel loop is split into up to this many tasks per thread (at least one task
  // per thread where the loop allows), so that the wave scheduler can group them into coarser
  // or finer chunks; 1 gives one task per thread. See native_task_count.
  int max_tasks_per_thread = 8;
  NativeWinograd winograd = NativeWinograd::measure;
  // The output tiles of `always`: 4 (F(4x4, 3x3), 4x fewer multiplications than the direct
  // conv) or 2 (F(2x2, 3x3), 2.25x, smaller rounding error).
  int winograd_tile = 4;
};

// The task count of a native kernel whose parallel loop has `extent` iterations (0: no parallel
// loop) built for `threads` threads: the largest count up to max_tasks_per_thread * threads in
// which no task is empty and the tasks, grouped into min(count, threads) contiguous chunks (what
// the sequential executor runs), are as balanced as min(extent, threads) tasks would be.
int32_t native_task_count(int64_t extent, int threads, int max_tasks_per_thread);

// The canonical name of a generated-code target (BuildOptions::target): "" for this machine (""
// or "host"), else the LLVM CPU name ("avx2" gives "x86-64-v3", "avx512" "x86-64-v4").
// Errors: InvalidArgument for a name LLVM does not know as an x86-64 CPU (or a host that is no
// x86-64 machine), FailedPrecondition naming the missing ISA features when this machine cannot
// run the target's code (it must, to measure it).
absl::StatusOr<std::string> resolve_native_target(std::string_view target);

// The channel block of the blocked layouts for code built for `target` (as resolve_native_target
// takes it; BuildOptions::channel_block): one vector of f32, 8 channels on a target whose widest
// vectors are 32 bytes (AVX2), else 16 (AVX-512, and the default for other or unknown targets).
int32_t native_channel_block(std::string_view target);

// A new native backend (name "native", device cpu). Its kernels are compiled for
// BuildOptions::target (an unknown or unrunnable target fails the build with the error of
// resolve_native_target). Building a group fails with InvalidArgument
// naming the node when an operator, dtype or attribute is not supported.
std::unique_ptr<Backend> make_native_backend(NativeBackendOptions options = {});

// Adds make_native_backend() to `registry`; AlreadyExists when "native" is registered.
absl::Status register_native_backend(BackendRegistry& registry);

}  // namespace collage
