// use_passive_openmp_wait: re-executes the program with OMP_WAIT_POLICY=passive (why, with
// figures: openmp_wait.h).
#include "openmp_wait.h"

#include <unistd.h>

#include <cstdlib>

namespace collage::cli {

void use_passive_openmp_wait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY")) return;
  if (setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/1) != 0) return;
  // libgomp reads GOMP_SPINCOUNT with either policy; a user's own value stands.
  (void)setenv("GOMP_SPINCOUNT", kOpenMpSpinCount, /*overwrite=*/0);
  execv("/proc/self/exe", argv);
  // The exec failed: carry on with libgomp's default policy; the child processes we start get the
  // passive one.
}

}  // namespace collage::cli
