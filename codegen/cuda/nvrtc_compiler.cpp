// NVRTC compilation of generated kernels and the on-disk cache of their images.
#include "codegen/cuda/nvrtc_compiler.h"

#include <cuda.h>
#include <nvrtc.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>
#include <vector>

#include "core/str_cat.h"
#include "library_table.h"

namespace collage::codegen::cuda {

namespace {

// NVRTC's entry points, typed from nvrtc.h. The library is loaded at run time (dlopen), so that
// the compiler, which links this code, starts on machines without the CUDA toolkit; there every
// compile says that NVRTC is missing.
struct Nvrtc {
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcGetNumSupportedArchs) num_archs = nullptr;
  decltype(&::nvrtcGetSupportedArchs) archs = nullptr;
  decltype(&::nvrtcCreateProgram) create = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy = nullptr;
  decltype(&::nvrtcCompileProgram) compile = nullptr;
  decltype(&::nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) log = nullptr;
  decltype(&::nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) cubin = nullptr;
  decltype(&::nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&::nvrtcGetPTX) ptx = nullptr;
  decltype(&::nvrtcGetErrorString) error = nullptr;
};

// The process's NVRTC table (libnvrtc.so.<the toolkit's major version>), or null with `*why` set.
const Nvrtc* nvrtc(std::string* why) {
  static const rt_cuda::LoadedTable<Nvrtc>* const loaded = rt_cuda::load_table<Nvrtc>(
      "NVRTC", "NVRTC not found", str_cat("libnvrtc.so.", CUDA_VERSION / 1000),
      [](Nvrtc& n, auto sym) {
        sym(n.version, "nvrtcVersion");
        sym(n.num_archs, "nvrtcGetNumSupportedArchs");
        sym(n.archs, "nvrtcGetSupportedArchs");
        sym(n.create, "nvrtcCreateProgram");
        sym(n.destroy, "nvrtcDestroyProgram");
        sym(n.compile, "nvrtcCompileProgram");
        sym(n.log_size, "nvrtcGetProgramLogSize");
        sym(n.log, "nvrtcGetProgramLog");
        sym(n.cubin_size, "nvrtcGetCUBINSize");
        sym(n.cubin, "nvrtcGetCUBIN");
        sym(n.ptx_size, "nvrtcGetPTXSize");
        sym(n.ptx, "nvrtcGetPTX");
        sym(n.error, "nvrtcGetErrorString");
      });
  return rt_cuda::usable_table(loaded, why);
}

constexpr char kMagic[8] = {'C', 'L', 'G', 'C', 'U', 'D', 'A', '1'};

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::vector<std::string> compile_flags(const NvrtcOptions& o) {
  const std::string arch = str_cat(o.kind == ImageKind::cubin ? "sm_" : "compute_", o.arch);
  // Precise fp32 (no fast math, no flush to zero) so results match the CPU reference.
  return {"--gpu-architecture=" + arch,
          "--std=c++17",
          "--fmad=true",
          "--ftz=false",
          "--prec-div=true",
          "--prec-sqrt=true"};
}

std::string cache_key(const CudaKernel& k, const NvrtcOptions& o) {
  std::string key = str_cat("nvrtc ", nvrtc_version(), "\n");
  for (const std::string& f : compile_flags(o)) key += f + "\n";
  key += str_cat("kernel ", k.name, "\n", k.source);
  return key;
}

// The cached image for `key`, if a matching entry exists.
std::optional<std::string> read_cache(const std::filesystem::path& file, const std::string& key) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t header = sizeof kMagic + sizeof(uint64_t);
  if (data.size() < header || data.compare(0, sizeof kMagic, kMagic, sizeof kMagic) != 0) {
    return std::nullopt;
  }
  uint64_t key_size = 0;
  std::memcpy(&key_size, data.data() + sizeof kMagic, sizeof key_size);
  if (key_size != key.size() || data.size() < header + key_size ||
      data.compare(header, key_size, key) != 0) {
    return std::nullopt;
  }
  return data.substr(header + key_size);
}

// Writes atomically (a temporary file renamed over the entry); failures leave no entry.
void write_cache(const std::filesystem::path& file, const std::string& key,
                 const std::string& image) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) return;
  std::random_device rd;
  const std::filesystem::path tmp = file.string() + str_cat(".tmp", rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    const uint64_t key_size = key.size();
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char*>(&key_size), sizeof key_size);
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    out.write(image.data(), static_cast<std::streamsize>(image.size()));
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

bool arch_supported(const Nvrtc& nv, int arch) {
  int n = 0;
  if (nv.num_archs(&n) != NVRTC_SUCCESS || n <= 0) return false;
  std::vector<int> archs(n);
  if (nv.archs(archs.data()) != NVRTC_SUCCESS) return false;
  for (int a : archs) {
    if (a == arch) return true;
  }
  return false;
}

}  // namespace

std::string nvrtc_version() {
  std::string why;
  const Nvrtc* nv = nvrtc(&why);
  if (nv == nullptr) return "unavailable";
  int major = 0, minor = 0;
  if (nv->version(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return str_cat(major, ".", minor);
}

std::filesystem::path default_cuda_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::filesystem::path(xdg) / "collage" / "cuda";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::filesystem::path(home) / ".cache" / "collage" / "cuda";
  }
  return {};
}

absl::StatusOr<CompiledCuda> compile_cuda(const CudaKernel& kernel, const NvrtcOptions& options) {
  std::string why;
  const Nvrtc* nv = nvrtc(&why);
  if (nv == nullptr)
    return absl::FailedPreconditionError(str_cat("kernel '", kernel.name, "': ", why));
  if (!arch_supported(*nv, options.arch)) {
    return absl::InvalidArgumentError(str_cat("nvrtc ", nvrtc_version(), ": kernel '", kernel.name,
                                              "': architecture sm_", options.arch,
                                              " is not supported"));
  }
  CompiledCuda out;
  out.name = kernel.name;
  out.kind = options.kind;
  out.arch = options.arch;
  out.launch = kernel.launch;
  out.params = kernel.params;

  const std::string key = cache_key(kernel, options);
  const std::filesystem::path dir =
      options.cache_dir ? *options.cache_dir : default_cuda_cache_dir();
  std::filesystem::path file;
  if (!dir.empty()) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(key)));
    file = dir / str_cat(kernel.name, "-", hex, "-sm", options.arch,
                         options.kind == ImageKind::cubin ? ".cubin" : ".ptx");
    if (std::optional<std::string> image = read_cache(file, key)) {
      out.image = std::move(*image);
      out.from_cache = true;
      return out;
    }
  }

  nvrtcProgram prog = nullptr;
  const std::string file_name = kernel.name + ".cu";
  if (nvrtcResult r =
          nv->create(&prog, kernel.source.c_str(), file_name.c_str(), 0, nullptr, nullptr);
      r != NVRTC_SUCCESS) {
    return absl::InternalError(
        str_cat("nvrtc: kernel '", kernel.name, "': nvrtcCreateProgram failed: ", nv->error(r)));
  }
  struct Destroy {
    const Nvrtc* nv;
    nvrtcProgram* p;
    ~Destroy() { nv->destroy(p); }
  } destroy{nv, &prog};

  const std::vector<std::string> flags = compile_flags(options);
  std::vector<const char*> argv;
  for (const std::string& f : flags) argv.push_back(f.c_str());
  const nvrtcResult compiled = nv->compile(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  if (nv->log_size(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    out.log.resize(log_size);
    if (nv->log(prog, out.log.data()) != NVRTC_SUCCESS) out.log.clear();
    while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n'))
      out.log.pop_back();
  }
  if (compiled != NVRTC_SUCCESS) {
    return absl::InvalidArgumentError(str_cat("nvrtc ", nvrtc_version(), ": kernel '", kernel.name,
                                              "' does not compile for sm_", options.arch, ": ",
                                              nv->error(compiled), "\n", out.log));
  }
  size_t size = 0;
  nvrtcResult got =
      options.kind == ImageKind::cubin ? nv->cubin_size(prog, &size) : nv->ptx_size(prog, &size);
  if (got == NVRTC_SUCCESS) {
    out.image.resize(size);
    got = options.kind == ImageKind::cubin ? nv->cubin(prog, out.image.data())
                                           : nv->ptx(prog, out.image.data());
  }
  if (got != NVRTC_SUCCESS) {
    return absl::InternalError(str_cat("nvrtc: kernel '", kernel.name,
                                       "': reading the compiled image failed: ", nv->error(got)));
  }
  // PTX comes with a terminating NUL that the driver does not need in a std::string.
  if (options.kind == ImageKind::ptx && !out.image.empty() && out.image.back() == '\0') {
    out.image.pop_back();
  }
  if (!file.empty()) write_cache(file, key, out.image);
  return out;
}

}  // namespace collage::codegen::cuda
