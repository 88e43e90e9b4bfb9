// Backend runtime modules (libcollage_rt_<name>.so) found, opened and checked, and the artifact's
// embedded native code loaded from memory.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "collage/runtime_module.h"
#include "status.h"

namespace collage::rt {

// An opened shared library; closed (dlclose) on destruction.
class SharedLibrary {
 public:
  SharedLibrary(void* handle, int fd) : handle_(handle), fd_(fd) {}
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  // The address of `symbol`, or null.
  void* symbol(const char* symbol) const;

 private:
  void* handle_;
  int fd_;  // the memfd the library was loaded from (kept open while it is loaded), or -1
};

struct RuntimeModule {
  std::unique_ptr<SharedLibrary> library;
  const collage_rt_module_v1_t* table = nullptr;
};

// Opens libcollage_rt_<name>.so from, in order: `module_dir` (when not empty), the directory of
// the runtime library itself, then the dynamic linker's default search path. The library is
// opened with RTLD_NODELETE (modules such as oneDNN's start threads that must outlive a close).
// The module's table is checked: entry symbol, struct_size, ABI version, name, callbacks.
// Errors: Code::not_found naming the module and every place tried; Code::unsupported for a
// module with another ABI version; Code::io when a library is there but does not load.
Status open_runtime_module(const std::string& name, const std::string& module_dir,
                           RuntimeModule* out);

// Loads the shared object in `code` (already checksummed by the caller): written to an
// anonymous memory file (memfd_create) and dlopened through /proc/self/fd/N; when that is not
// possible, through a private temporary file that is unlinked right after loading.
Status load_native_code(std::span<const uint8_t> code, std::unique_ptr<SharedLibrary>* out);

}  // namespace collage::rt
