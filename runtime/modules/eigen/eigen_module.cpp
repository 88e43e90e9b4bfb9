// The Eigen runtime module: its kernel factory and function table; the C entry points (no C++
// exception leaves them) are the shared ones of ../common/unit_module.h.
#include "eigen_module.h"

#include <string>

#include "../common/unit_module.h"
#include "eigen_kernel.h"

namespace collage::rt_eigen {
namespace {

constexpr const char* kModuleName = "eigen";
constexpr const char* kModuleVersion = "eigen-3.4/1";
// Tasks reported to the runtime; kernels with more units run several units per task.
constexpr int64_t kMaxTasks = 1024;

std::string create_kernel(const collage_kernel_desc_t& desc, EigenKernel*& out) {
#if defined(COLLAGE_EIGEN_AVX2)
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    return "this Eigen module was built for AVX2 and FMA, which this CPU lacks";
#endif
  KernelSetup setup;
  if (std::string e = KernelSetup::from_desc(desc, setup); !e.empty()) return e;
  const std::string entry = desc.entry;
  using Factory = std::string (*)(const KernelSetup&, const uint8_t*, size_t, KernelPtr&);
  Factory factory = nullptr;
  if (entry == kEntryMatMul)
    factory = create_matmul_kernel;
  else if (entry == kEntryConv)
    factory = create_conv_kernel;
  else if (entry == kEntryElementwise)
    factory = create_elementwise_kernel;
  else if (entry == kEntryReduce)
    factory = create_reduce_kernel;
  else if (entry == kEntrySoftmax)
    factory = create_softmax_kernel;
  else
    return "unknown kernel entry '" + entry + "'";
  KernelPtr kernel;
  if (std::string e = factory(setup, desc.params, desc.params_size, kernel); !e.empty()) return e;
  out = kernel.release();
  return "";
}

using Module = rt_common::UnitModule<EigenKernel, create_kernel, kMaxTasks>;

}  // namespace

const collage_rt_module_v1_t* module_table() {
  static constexpr collage_rt_module_v1_t kModule = Module::table(kModuleName, kModuleVersion);
  return &kModule;
}

}  // namespace collage::rt_eigen
