// The dnnl runtime module's C function table (the shared entry points of a team-kernel module,
// which turn every exception into an error code and message) and its probe.
#include "dnnl_module.h"

#include <exception>
#include <memory>
#include <string>

#include "../common/team_module.h"
#include "dnnl_kernel.h"
#include "dnnl_threaded.h"

namespace collage::rt_dnnl {
namespace {

#define COLLAGE_RT_DNNL_STR2(x) #x
#define COLLAGE_RT_DNNL_STR(x) COLLAGE_RT_DNNL_STR2(x)
constexpr const char* kVersion =
    "dnnl-" COLLAGE_RT_DNNL_STR(DNNL_VERSION_MAJOR) "." COLLAGE_RT_DNNL_STR(
        DNNL_VERSION_MINOR) "." COLLAGE_RT_DNNL_STR(DNNL_VERSION_PATCH) "/1";

// The entry points are the shared ones of a team-kernel module (../common/team_module.h).
struct Traits {
  using Kernel = ThreadedKernel;
  static Kernel* create(const collage_kernel_desc_t& desc) { return new ThreadedKernel(desc); }
  static std::string message(const std::exception& e) {
    if (dynamic_cast<const dnnl::error*>(&e)) return std::string("oneDNN: ") + e.what();
    return e.what();
  }
  static constexpr const char* kKernels = "dnnl kernels";
};
using Module = rt_common::TeamModule<Traits>;

constexpr collage_rt_module_v1_t kModule = Module::table("dnnl", kVersion);

}  // namespace

const collage_rt_module_v1_t* module_table() {
  return &kModule;
}

ProbeResult probe_kernel(const collage_kernel_desc_t& desc) {
  ProbeResult result;
  char err[1024] = {0};
  std::unique_ptr<DnnlKernel> kernel;
  if (Module::guarded(err, sizeof err, COLLAGE_STATUS_UNSUPPORTED,
                      [&] { kernel = std::make_unique<DnnlKernel>(desc); }) != 0) {
    result.error = err;
    return result;
  }
  for (const RepackedConstant& c : kernel->repacked()) {
    const auto* p = static_cast<const uint8_t*>(c.data);
    result.packed.push_back({c.index, c.layout, std::vector<uint8_t>(p, p + c.bytes)});
  }
  result.implementations = kernel->implementations();
  return result;
}

}  // namespace collage::rt_dnnl
