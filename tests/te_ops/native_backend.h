// The native backend the TE operator tests check their graphs on (common/backend_check.h).
#pragma once

#include "collage/backends/native.h"

namespace collage::testing {

// One for the test process: its kernels share the JIT and code cache.
inline const Backend& native_backend() {
  static const std::unique_ptr<Backend> backend = make_native_backend();
  return *backend;
}

}  // namespace collage::testing
