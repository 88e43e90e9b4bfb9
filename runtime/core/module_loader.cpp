// Finding and opening runtime modules; loading embedded native code from memory.
#include "module_loader.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace collage::rt {
namespace {

std::string last_dlerror() {
  const char* e = dlerror();
  return e ? e : "unknown error";
}

// The directory holding this library (libcollage_runtime.so), or "" when unknown.
std::string runtime_library_dir() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&runtime_library_dir), &info) || !info.dli_fname) return "";
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

Status check_table(const std::string& name, const std::string& where,
                   const collage_rt_module_v1_t* t) {
  const std::string what = cat("runtime module '", name, "' (", where, ")");
  if (!t) return error(Code::unsupported, what, ": collage_rt_module_v1_get returned no table");
  if (t->struct_size < COLLAGE_RT_MODULE_V1_BASE_SIZE)
    return error(Code::unsupported, what, ": table of ", t->struct_size, " bytes, expected ",
                 COLLAGE_RT_MODULE_V1_BASE_SIZE, " or more");
  if (t->abi_version != COLLAGE_RT_MODULE_ABI_VERSION)
    return error(Code::unsupported, what, ": module ABI version ", t->abi_version,
                 ", this runtime needs ", COLLAGE_RT_MODULE_ABI_VERSION);
  if (!t->name || name != t->name)
    return error(Code::unsupported, what, ": the module calls itself '",
                 t->name ? t->name : "(null)", "'");
  if (!t->kernel_create || !t->kernel_task_count || !t->kernel_run || !t->kernel_destroy)
    return error(Code::unsupported, what, ": a callback of its table is missing");
  return Status();
}

}  // namespace

SharedLibrary::~SharedLibrary() {
  if (handle_) dlclose(handle_);
  if (fd_ >= 0) ::close(fd_);
}

void* SharedLibrary::symbol(const char* symbol) const {
  return dlsym(handle_, symbol);
}

Status open_runtime_module(const std::string& name, const std::string& module_dir,
                           RuntimeModule* out) {
  const std::string file = "libcollage_rt_" + name + ".so";
  std::string tried;
  std::vector<std::string> candidates;
  if (!module_dir.empty()) candidates.push_back(module_dir + "/" + file);
  if (std::string dir = runtime_library_dir(); !dir.empty()) candidates.push_back(dir + "/" + file);
  candidates.push_back(file);  // the default search path
  for (const std::string& path : candidates) {
    const bool searched = path == file;
    if (!searched && ::access(path.c_str(), F_OK) != 0) {
      tried += cat(tried.empty() ? "" : ", ", path);
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle) {
      const std::string why = last_dlerror();
      if (searched) {
        tried += cat(tried.empty() ? "" : ", ", "the default library path (", why, ")");
        continue;
      }
      return error(Code::io, "runtime module '", name, "': ", path, " does not load: ", why);
    }
    auto library = std::make_unique<SharedLibrary>(handle, -1);
    auto get =
        reinterpret_cast<collage_rt_module_v1_get_fn>(library->symbol("collage_rt_module_v1_get"));
    if (!get)
      return error(Code::unsupported, "runtime module '", name, "' (", path,
                   ") does not export collage_rt_module_v1_get");
    const collage_rt_module_v1_t* table = get();
    COLLAGE_RT_RETURN_IF_ERROR(check_table(name, path, table));
    out->library = std::move(library);
    out->table = table;
    return Status();
  }
  return error(Code::not_found, "runtime module '", name,
               "' needed by the artifact was not found (", file, "; tried ", tried, ")");
}

namespace {

bool write_all(int fd, std::span<const uint8_t> code) {
  size_t done = 0;
  while (done < code.size()) {
    const ssize_t n = ::write(fd, code.data() + done, code.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// memfd_create + dlopen("/proc/self/fd/N"). The descriptor stays open while the library is
// loaded, so that no other library can be opened under the same path name meanwhile.
Status load_from_memfd(std::span<const uint8_t> code, std::unique_ptr<SharedLibrary>* out) {
  const int fd = memfd_create("collage-native", MFD_CLOEXEC);
  if (fd < 0) return error(Code::io, "memfd_create: ", std::strerror(errno));
  if (!write_all(fd, code)) {
    ::close(fd);
    return error(Code::io, "writing the native code to a memfd failed");
  }
  const std::string path = cat("/proc/self/fd/", fd);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const std::string why = last_dlerror();
    ::close(fd);
    return error(Code::io, "dlopen of the native code through ", path, ": ", why);
  }
  *out = std::make_unique<SharedLibrary>(handle, fd);
  return Status();
}

Status load_from_temp_file(std::span<const uint8_t> code, std::unique_ptr<SharedLibrary>* out) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = cat(tmp && *tmp ? tmp : "/tmp", "/collage-native-XXXXXX");
  const int fd = mkstemp(path.data());
  if (fd < 0)
    return error(Code::io,
                 "cannot create a temporary file for the native code: ", std::strerror(errno));
  const bool written = write_all(fd, code);
  ::close(fd);
  void* handle = written ? dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
  const std::string why = written ? (handle ? "" : last_dlerror()) : "write failed";
  ::unlink(path.c_str());
  if (!handle) return error(Code::io, "loading the native code from ", path, ": ", why);
  *out = std::make_unique<SharedLibrary>(handle, -1);
  return Status();
}

}  // namespace

Status load_native_code(std::span<const uint8_t> code, std::unique_ptr<SharedLibrary>* out) {
  Status memfd = load_from_memfd(code, out);
  if (memfd.ok()) return memfd;
  Status file = load_from_temp_file(code, out);
  if (file.ok()) return file;
  return error(Code::io, "cannot load the artifact's native code: ", memfd.message(), "; ",
               file.message());
}

}  // namespace collage::rt
