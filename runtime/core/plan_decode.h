// The two halves of decode_artifact after the file layer: the FlatBuffers plan to a Program with
// every field checked, and the whole-program checks (dataflow, memory plan).
#pragma once

#include <cstdint>
#include <span>

#include "program.h"

namespace collage::artifact::fb {
struct Plan;
struct WaveSchedule;
}

namespace collage::rt {

// Verifies the FlatBuffer in `plan` and fills `program` from it; every id, dtype, shape, storage
// location and constant range is checked (`constants` is the constants section, possibly empty).
// A dynamic-batch plan's range and variants are decoded and checked against the root plan's
// inputs and outputs (batch_decode.cpp).
Status decode_plan(std::span<const uint8_t> plan, std::span<const uint8_t> constants,
                   Program* program);

// One plan table into `program` (decode_plan's field checks, without the dynamic batch).
Status decode_plan_table(const artifact::fb::Plan& plan, std::span<const uint8_t> constants,
                         Program* program);

// The dynamic batch of a root plan whose table is decoded into `program` already: the range and
// axes checked against its inputs and outputs, each variant decoded and checked against it (the
// same inputs and outputs but for the batch; batches ascending inside the range; every batch of
// the range has a plan unless padding is allowed). Nothing when the plan has no dynamic batch.
// batch_decode.cpp.
Status decode_dynamic_batch(const artifact::fb::Plan& plan, std::span<const uint8_t> constants,
                            Program* program);

// A plan's wave schedule, when it has one of a known version, into program->schedule (bounds of
// every count; the plan must have verified and its kernels been decoded). wave_plan.cpp.
Status decode_wave_schedule(const artifact::fb::WaveSchedule* schedule, Program* program);

// The kernel dependencies of `program` (waves::kernel_dependencies over its tensors and arena).
std::vector<std::vector<uint32_t>> program_dependencies(const Program& program);

// Kernels read only tensors written before them (inputs, constants, earlier outputs), write each
// tensor once, write only arena or output tensors; every graph output is written; arena tensors
// alive at the same kernel do not overlap; a wave schedule runs every chunk once, cannot deadlock
// and orders every dependency.
Status check_program(const Program& program);

}  // namespace collage::rt
