// collage_status_t: creation, access and release (exported by libcollage_runtime, used by the
// compiler C API too).
#include <string>

#include "collage/runtime.h"

struct collage_status {
  int32_t code;
  std::string message;
};

namespace {

// Returned when a status cannot be allocated; never freed. (The message fits the string's
// inline buffer, so creating it allocates nothing.)
collage_status_t* out_of_memory() noexcept {
  static collage_status status{COLLAGE_STATUS_INTERNAL, "out of memory"};
  return &status;
}

}  // namespace

extern "C" {

COLLAGE_API collage_status_t* collage_status_create(int32_t code, const char* message) {
  if (code == COLLAGE_STATUS_OK) return nullptr;
  try {
    return new collage_status{code, message ? message : ""};
  } catch (...) {
    return out_of_memory();
  }
}

COLLAGE_API int32_t collage_status_code(const collage_status_t* status) {
  return status ? status->code : COLLAGE_STATUS_OK;
}

COLLAGE_API const char* collage_status_message(const collage_status_t* status) {
  return status ? status->message.c_str() : "";
}

COLLAGE_API void collage_status_free(collage_status_t* status) {
  if (status != out_of_memory()) delete status;
}

}  // extern "C"
