// NVRTC compilation of generated kernels and the on-disk cache of their images.
#include "codegen/cuda/nvrtc_compiler.h"

#include <nvrtc.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>
#include <vector>

#include "core/str_cat.h"

namespace collage::codegen::cuda {

namespace {

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

bool arch_supported(int arch) {
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return false;
  std::vector<int> archs(n);
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return false;
  for (int a : archs) {
    if (a == arch) return true;
  }
  return false;
}

}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
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
  if (!arch_supported(options.arch)) {
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
          nvrtcCreateProgram(&prog, kernel.source.c_str(), file_name.c_str(), 0, nullptr, nullptr);
      r != NVRTC_SUCCESS) {
    return absl::InternalError(str_cat("nvrtc: kernel '", kernel.name,
                                       "': nvrtcCreateProgram failed: ", nvrtcGetErrorString(r)));
  }
  struct Destroy {
    nvrtcProgram* p;
    ~Destroy() { nvrtcDestroyProgram(p); }
  } destroy{&prog};

  const std::vector<std::string> flags = compile_flags(options);
  std::vector<const char*> argv;
  for (const std::string& f : flags) argv.push_back(f.c_str());
  const nvrtcResult compiled =
      nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    out.log.resize(log_size);
    if (nvrtcGetProgramLog(prog, out.log.data()) != NVRTC_SUCCESS) out.log.clear();
    while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n'))
      out.log.pop_back();
  }
  if (compiled != NVRTC_SUCCESS) {
    return absl::InvalidArgumentError(str_cat("nvrtc ", nvrtc_version(), ": kernel '", kernel.name,
                                              "' does not compile for sm_", options.arch, ": ",
                                              nvrtcGetErrorString(compiled), "\n", out.log));
  }
  size_t size = 0;
  nvrtcResult got = options.kind == ImageKind::cubin ? nvrtcGetCUBINSize(prog, &size)
                                                     : nvrtcGetPTXSize(prog, &size);
  if (got == NVRTC_SUCCESS) {
    out.image.resize(size);
    got = options.kind == ImageKind::cubin ? nvrtcGetCUBIN(prog, out.image.data())
                                           : nvrtcGetPTX(prog, out.image.data());
  }
  if (got != NVRTC_SUCCESS) {
    return absl::InternalError(
        str_cat("nvrtc: kernel '", kernel.name,
                "': reading the compiled image failed: ", nvrtcGetErrorString(got)));
  }
  // PTX comes with a terminating NUL that the driver does not need in a std::string.
  if (options.kind == ImageKind::ptx && !out.image.empty() && out.image.back() == '\0') {
    out.image.pop_back();
  }
  if (!file.empty()) write_cache(file, key, out.image);
  return out;
}

}  // namespace collage::codegen::cuda
