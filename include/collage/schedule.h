// Schedules (TVM style): how the computes of a tensor expression are turned into loops — split,
// tile, reorder, fuse, vectorize, parallel, unroll, bind, compute_at, compute_inline,
// compute_root, cache_write, pack — and lowering of a schedule to a loop-IR PrimFunc.
//
//   te::Schedule s = te::create_schedule({C});
//   auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), 8, 32);
//   s[C].vectorize(ji).parallel(io);
//   absl::StatusOr<te::PrimFunc> f = te::lower(s, {A, B, C}, "matmul");
//
// Errors: a primitive that is illegal (an axis that is not a leaf of the stage, compute_at to a
// stage that does not read the tensor, vectorizing a reduction axis, ...) changes nothing and
// records an InvalidArgument error naming the stage and the axis. The first error is kept in
// Schedule::status() and returned by lower(); primitives called after an error still check their
// own arguments but never replace the first error.
//
// Splits whose factor does not divide the extent iterate over ceil(extent / factor) * factor
// points; the points past the end are skipped by a guard (`if (outer * factor + inner < extent)`)
// that lowering places right inside the innermost loop it depends on and that the simplifier
// removes wherever it can prove it holds. A stage computed at a consumer's loop computes the region
// one iteration of that loop reads; where that region sticks out of its tensor (next to a padded
// split of the consumer), a stage with local storage computes extra elements that nobody reads,
// its coordinates clamped so that its own reads stay in bounds (no branch in its loops), and a
// stage stored in an argument buffer is guarded. Nothing is read or stored out of bounds.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collage/loop_ir.h"
#include "collage/te.h"

namespace collage::te {

namespace detail {
struct ScheduleImpl;
struct StageData;
}  // namespace detail

class Schedule;

// A handle to one stage (the loop nest computing one tensor) of a schedule. Handles stay valid
// while the schedule exists (also when it is moved); they do not follow a copy.
class Stage {
 public:
  // The tensor this stage computes (undefined for a handle that refers to no stage).
  Tensor tensor() const;
  std::string name() const;
  // Data-parallel / reduction root axes of the stage (the compute's axes).
  IterVar axis(int i) const;
  IterVar reduce_axis(int i) const;
  // The current loop order, outermost first.
  std::vector<IterVar> leaf_axes() const;

  // parent -> (outer, inner) with inner extent `factor` (>= 1).
  std::pair<IterVar, IterVar> split(const IterVar& parent, int64_t factor);
  // parent -> (outer, inner) with outer extent `nparts` (>= 1).
  std::pair<IterVar, IterVar> split_nparts(const IterVar& parent, int64_t nparts);
  // Splits x and y and orders the loops (x_outer, y_outer, x_inner, y_inner); returns them in
  // that order. x must come before y in the loop order.
  std::array<IterVar, 4> tile(const IterVar& x, const IterVar& y, int64_t x_factor,
                              int64_t y_factor);
  // Fuses two adjacent loops (outer immediately followed by inner) into one.
  IterVar fuse(const IterVar& outer, const IterVar& inner);
  // Puts the given leaf axes in this relative order; the positions they occupy are kept.
  Stage& reorder(const std::vector<IterVar>& order);
  Stage& vectorize(const IterVar& axis);
  Stage& parallel(const IterVar& axis);
  Stage& unroll(const IterVar& axis);
  // Binds a data-parallel leaf axis to a GPU index ("blockIdx.x", "threadIdx.y", ...). The loop
  // is kept in the loop IR for a GPU code generator; the CPU code generator refuses it.
  Stage& bind(const IterVar& axis, const std::string& thread_tag);
  // Computes this stage inside loop `axis` of `consumer`, only the region that one iteration of
  // that loop needs. This stage must have one reader: `consumer` itself, or a stage computed
  // inside `consumer`'s loops at or below `axis` (e.g. a block of A packed at a row-block loop of
  // C for the C.local tile that reads it). A stage whose own loops are bound to threadIdx tags is
  // computed by a block's threads together: its region is what all of them need (enclosing loops
  // bound to the same tags vary too), as for a tile staged in GPU shared memory.
  Stage& compute_at(const Stage& consumer, const IterVar& axis);
  // Substitutes the body into every reader; the stage gets no loops or storage.
  Stage& compute_inline();
  // Back to its own loop nest at the function's top level (the default).
  Stage& compute_root();
  // Marks a stage that repacks an input into another layout (e.g. a weight into panels). It stays
  // a top-level loop nest; lower() treats it as an input when its tensor is passed as an argument,
  // and lower_pack() builds a function that runs it alone, so a caller can run it once ahead.
  Stage& pack();

 private:
  friend class Schedule;
  Stage(detail::ScheduleImpl* impl, const TensorNode* t) : impl_(impl), tensor_(t) {}
  detail::StageData* data() const;
  detail::ScheduleImpl* impl_;
  const TensorNode* tensor_;
};

class Schedule {
 public:
  // A schedule for computing `outputs` (and everything they read) with default loop nests.
  explicit Schedule(std::vector<Tensor> outputs);
  Schedule(const Schedule& other);
  Schedule& operator=(const Schedule& other);
  Schedule(Schedule&&) noexcept;
  Schedule& operator=(Schedule&&) noexcept;
  ~Schedule();

  // The stage of `t`. Records an error when `t` is not part of this schedule (the handle then
  // refers to no stage and every primitive on it is an error).
  Stage operator[](const Tensor& t);
  // Rewrites stage `t` as `t = t.local` where `t.local` is a new stage computing t's old body
  // (for example a reduction accumulated in a local buffer, computed at a tile of t). Must be
  // called before any other primitive on `t`. Returns the new tensor.
  Tensor cache_write(const Tensor& t);

  // The first error any primitive recorded (OkStatus when none).
  const absl::Status& status() const;
  const std::vector<Tensor>& outputs() const;
  // Tensors of all stages (placeholders included), producers before consumers.
  std::vector<Tensor> stage_tensors() const;
  // A listing of the stages: loop order, splits, fuses, loop kinds, attachment.
  std::string to_string() const;

  const detail::ScheduleImpl& impl() const { return *impl_; }

 private:
  std::unique_ptr<detail::ScheduleImpl> impl_;
};

Schedule create_schedule(std::vector<Tensor> outputs);

// Lowers a schedule to a kernel. `args` lists the kernel's parameters in order: every placeholder
// the outputs read, the outputs, and optionally intermediate tensors (their values are written
// there) and tensors of `pack` stages (then taken as already-packed inputs). Intermediate stages
// not in `args` get local storage. Only one top-level loop nest may contain a `parallel` loop,
// and it must be that nest's outermost loop (the kernel ABI splits it into tasks). Returns the
// schedule's first error, or an InvalidArgument error for a schedule that cannot be lowered.
absl::StatusOr<PrimFunc> lower(const Schedule& schedule, const std::vector<Tensor>& args,
                               const std::string& name);

// Lowers the `pack` stage of `packed` alone: `args` must list every tensor it reads, and `packed`.
absl::StatusOr<PrimFunc> lower_pack(const Schedule& schedule, const Tensor& packed,
                                    const std::vector<Tensor>& args, const std::string& name);

}  // namespace collage::te
