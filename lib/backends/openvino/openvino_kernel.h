// OpenvinoKernel: a region compiled in process through the openvino runtime module's code, whose
// kernel record (the region as IR and OpenVINO's exported compiled model) is made the first time
// it is asked for, since only an artifact needs it.
#pragma once

#include <memory>
#include <mutex>

#include "collage/kernel.h"
#include "ov_module.h"

namespace collage::openvino_backend {

class OpenvinoKernel : public Kernel {
 public:
  OpenvinoKernel(std::shared_ptr<const ov::Model> model,
                 std::unique_ptr<rt_openvino::Region> region)
      : model_(std::move(model)), region_(std::move(region)) {}

  int32_t task_count() const override { return 1; }
  absl::Status run_task(void* const* args, int32_t task_id) override;
  // OpenVINO runs a region on a TBB team of its own, of the region's thread count; the wave
  // executor may limit it (a variant compiled for fewer threads).
  bool has_thread_team() const override { return true; }
  absl::Status run_task_threads(void* const* args, int32_t task_id,
                                int32_t max_threads) override;
  // Serializes the model and exports the compiled one on the first call (thread-safe). Should
  // either fail, the record lacks what failed: without a blob an artifact compiles the region
  // again when it is loaded; without the IR it does not load, saying the record is incomplete.
  const KernelRecord& record() const override;

 private:
  std::shared_ptr<const ov::Model> model_;
  std::unique_ptr<rt_openvino::Region> region_;
  mutable std::once_flag recorded_;
  mutable KernelRecord record_;
};

}  // namespace collage::openvino_backend
