// The trees runtime module: its TreeEnsemble kernel factory and function table; the C entry points
// (no C++ exception leaves them) are the shared ones of ../common/unit_module.h.
#include "trees_module.h"

#include <cstring>
#include <string>

#include "../common/unit_module.h"
#include "trees_kernel.h"

namespace collage::rt_trees {
namespace {

// Tasks reported to the runtime; kernels with more units run several units per task.
constexpr int64_t kMaxTasks = 256;

std::string create_kernel(const collage_kernel_desc_t& desc, EnsembleKernel*& kernel) {
  if (std::strcmp(desc.entry, kEntryEnsemble) != 0)
    return std::string("unknown kernel entry '") + desc.entry + "'";
  return EnsembleKernel::create(desc, kernel);
}

using Module = rt_common::UnitModule<EnsembleKernel, create_kernel, kMaxTasks>;

}  // namespace

const collage_rt_module_v1_t* module_table() {
  static constexpr collage_rt_module_v1_t kModule = Module::table(kModuleName, kModuleVersion);
  return &kModule;
}

}  // namespace collage::rt_trees
