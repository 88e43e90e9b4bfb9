// Checks that a placeholder or compute is well formed before it is scheduled.
#pragma once

#include "absl/status/status.h"
#include "collage/te.h"

namespace collage::te {

// InvalidArgument naming the tensor when: the index function's arity differs from the rank, a
// dimension is negative, the body is missing or has an undefined part, a reduction is not the
// outermost expression, a tensor is read with the wrong number of indices or a non-integer index,
// or the body uses a variable that is not one of the compute's axes.
absl::Status check_compute(const Tensor& t);

}  // namespace collage::te
