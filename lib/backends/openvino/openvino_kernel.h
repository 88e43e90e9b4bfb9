// OpenvinoKernel: a region compiled in process through the openvino runtime module's code, whose
// kernel record (the region as IR and OpenVINO's exported compiled model) is made the first time
// it is asked for, since only an artifact needs it, and then stored in the region cache.
// CachedRegionKernel: a region whose record the region cache had, compiled only if it is run.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "collage/kernel.h"
#include "ov_module.h"

namespace collage::openvino_backend {

// Where a kernel's record goes in the region cache (region_cache.h); no directory: nowhere.
struct RecordCacheEntry {
  std::string dir;
  uint64_t key = 0;
};

class OpenvinoKernel : public Kernel {
 public:
  OpenvinoKernel(std::shared_ptr<const ov::Model> model,
                 std::unique_ptr<rt_openvino::Region> region, RecordCacheEntry cache = {})
      : model_(std::move(model)), region_(std::move(region)), cache_(std::move(cache)) {}

  int32_t task_count() const override { return 1; }
  absl::Status run_task(void* const* args, int32_t task_id) override;
  // OpenVINO runs a region on a TBB team of its own, of the region's thread count; the wave
  // executor may limit it (a variant compiled for fewer threads).
  bool has_thread_team() const override { return true; }
  absl::Status run_task_threads(void* const* args, int32_t task_id,
                                int32_t max_threads) override;
  // Serializes the model and exports the compiled one on the first call (thread-safe), and
  // stores the record in the region cache (a cache that cannot be written costs the next compile
  // time, not this one correctness). Should either fail, the record lacks what failed: without
  // a blob an artifact compiles the region again when it is loaded; without the IR it does not
  // load, saying the record is incomplete.
  const KernelRecord& record() const override;

 private:
  std::shared_ptr<const ov::Model> model_;
  std::unique_ptr<rt_openvino::Region> region_;
  RecordCacheEntry cache_;
  mutable std::once_flag recorded_;
  mutable KernelRecord record_;
};

class CachedRegionKernel : public Kernel {
 public:
  using Compile = std::function<absl::StatusOr<std::unique_ptr<Kernel>>()>;
  // `record` from the region cache; `compile` builds the region when it is first run.
  CachedRegionKernel(KernelRecord record, Compile compile)
      : record_(std::move(record)), compile_(std::move(compile)) {}

  int32_t task_count() const override { return 1; }
  absl::Status run_task(void* const* args, int32_t task_id) override;
  bool has_thread_team() const override { return true; }
  absl::Status run_task_threads(void* const* args, int32_t task_id,
                                int32_t max_threads) override;
  const KernelRecord& record() const override { return record_; }

 private:
  // The compiled region, made on the first call (thread-safe), or why it could not be.
  absl::StatusOr<Kernel*> compiled();

  KernelRecord record_;
  Compile compile_;
  std::once_flag compiled_once_;
  std::unique_ptr<Kernel> kernel_;
  absl::Status status_;
};

}  // namespace collage::openvino_backend
