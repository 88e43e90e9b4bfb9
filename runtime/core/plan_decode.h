// The two halves of decode_artifact after the file layer: the FlatBuffers plan to a Program with
// every field checked, and the whole-program checks (dataflow, memory plan).
#pragma once

#include <cstdint>
#include <span>

#include "program.h"

namespace collage::rt {

// Verifies the FlatBuffer in `plan` and fills `program` from it; every id, dtype, shape, storage
// location and constant range is checked (`constants` is the constants section, possibly empty).
Status decode_plan(std::span<const uint8_t> plan, std::span<const uint8_t> constants,
                   Program* program);

// Kernels read only tensors written before them (inputs, constants, earlier outputs), write each
// tensor once, write only arena or output tensors; every graph output is written; arena tensors
// alive at the same kernel do not overlap.
Status check_program(const Program& program);

}  // namespace collage::rt
