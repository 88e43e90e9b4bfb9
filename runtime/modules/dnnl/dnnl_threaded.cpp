// ThreadedKernel: the descriptor copy and the variants by thread count.
#include "dnnl_threaded.h"

namespace collage::rt_dnnl {

ThreadedKernel::ThreadedKernel(const collage_kernel_desc_t& desc)
    : full_(std::make_unique<DnnlKernel>(desc)) {
  // DnnlKernel validated the descriptor: its counts and pointers are sound.
  entry_ = desc.entry;
  params_.assign(desc.params, desc.params + desc.params_size);
  for (int32_t i = 0; i < desc.num_args; ++i)
    shapes_.emplace_back(desc.args[i].shape, desc.args[i].shape + desc.args[i].rank);
  for (int32_t i = 0; i < desc.num_constants; ++i)
    shapes_.emplace_back(desc.constant_descs[i].shape,
                         desc.constant_descs[i].shape + desc.constant_descs[i].rank);
  size_t s = 0;
  for (int32_t i = 0; i < desc.num_args; ++i, ++s)
    args_.push_back({desc.args[i].dtype, desc.args[i].rank, shapes_[s].data()});
  for (int32_t i = 0; i < desc.num_constants; ++i, ++s)
    constant_descs_.push_back(
        {desc.constant_descs[i].dtype, desc.constant_descs[i].rank, shapes_[s].data()});
  constants_.assign(desc.constants, desc.constants + desc.num_constants);
  desc_ = desc;
  desc_.struct_size = sizeof desc_;
  desc_.entry = entry_.c_str();
  desc_.params = params_.data();
  desc_.args = args_.data();
  desc_.constant_descs = constant_descs_.data();
  desc_.constants = constants_.data();
}

DnnlKernel& ThreadedKernel::variant(int32_t max_threads) {
  if (max_threads < 1)
    throw ParamError("a kernel cannot run on " + std::to_string(max_threads) + " threads");
  if (max_threads >= full_->threads()) return *full_;
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<DnnlKernel>& v = variants_[max_threads];
  if (!v) v = std::make_unique<DnnlKernel>(desc_, max_threads);
  return *v;
}

void ThreadedKernel::run_threads(void* const* args, int32_t max_threads) {
  variant(max_threads).run(args);
}

}  // namespace collage::rt_dnnl
