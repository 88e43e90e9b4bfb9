// Helpers of both C APIs (runtime and compiler): statuses made through the exported
// collage_status_create, and the catch-all that keeps C++ exceptions from crossing the C
// boundary.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "collage/runtime.h"

namespace collage::capi {

inline collage_status_t* make_status(int32_t code, const std::string& message) noexcept {
  return collage_status_create(code, message.c_str());
}

// "where: what" as a status of `code`; the bare message if memory runs out.
inline collage_status_t* make_status(int32_t code, const char* where, const char* what) noexcept {
  try {
    return make_status(code, std::string(where) + ": " + what);
  } catch (...) {
    return collage_status_create(code, what);
  }
}

// Runs `body` (returning collage_status_t*), turning any exception into a status naming `where`.
template <typename F>
collage_status_t* guarded(const char* where, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return make_status(COLLAGE_STATUS_INTERNAL, where, "out of memory");
  } catch (const std::exception& e) {
    return make_status(COLLAGE_STATUS_INTERNAL, where, e.what());
  } catch (...) {
    return make_status(COLLAGE_STATUS_INTERNAL, where, "unknown exception");
  }
}

}  // namespace collage::capi
