// WaveRunner: persistent worker threads that execute a wave schedule. Each worker walks its own
// entry list; an entry's waits spin (then sleep) on other workers' step counters, which a worker
// publishes with a release store after every entry, so there is no barrier between operators.
// A thread about to wait on a list whose worker has not woken up yet (e.g. on a busy machine) runs
// that list itself as far as it needs: the schedule passed the check, so that prefix never waits
// on anything behind the helper. Once awake, a worker owns its list. Shared by the runtime's wave executor
// and the compiler's executor measurement.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "wave_schedule.h"

namespace collage::waves {

// Time of runs, summed over the runs since the runner was made (nanoseconds).
struct WaveRunStats {
  uint64_t runs = 0;
  uint64_t wall_ns = 0;      // from the start of run() to its return, on the caller
  uint64_t task_ns = 0;      // inside the entry function, mean over the workers
  uint64_t wait_ns = 0;      // blocked on a dependency, mean over the workers
  uint64_t overhead_ns = 0;  // the rest once running: counters, bookkeeping, mean over workers
  uint64_t wake_ns = 0;      // from the start of run() until a worker runs, mean over workers
  uint64_t helped = 0;       // entries a thread ran for a worker that had not started
};

class WaveRunner {
 public:
  // Runs one entry; must not throw. Called from the thread that runs the entry.
  using EntryFn = std::function<void(uint32_t kernel, uint32_t chunk)>;

  // Starts schedule.workers.size() - 1 threads (the caller is worker 0). `schedule` must have
  // passed check_wave_schedule and outlive the runner.
  explicit WaveRunner(const WaveSchedule* schedule);
  ~WaveRunner();
  WaveRunner(const WaveRunner&) = delete;
  WaveRunner& operator=(const WaveRunner&) = delete;

  // Runs every entry once and returns when all have finished; false without running anything
  // when another run is in progress on this runner (the workers serve one run at a time).
  bool try_run(const EntryFn& fn);

  WaveRunStats stats() const;

 private:
  // One worker list's progress in the current run. `next` belongs to whoever holds `claim`.
  struct alignas(64) ListState {
    std::atomic<uint32_t> done{0};   // entries finished (release after each)
    std::atomic<uint32_t> claim{0};  // 1 while a thread runs the list
    std::atomic<uint32_t> awake{0};  // its worker has started this run: nobody else claims it
    uint32_t next = 0;               // the next entry to run
  };
  struct Times {
    uint64_t task_ns = 0, wait_ns = 0, busy_ns = 0, helped = 0;
  };
  void worker_loop(uint32_t worker);
  // Claims list `worker` (waiting while a helper holds it), runs it to the end, releases it.
  void run_own_list(uint32_t worker, Times* t);
  // Runs entries of list `w`, whose claim the caller holds, until `until` are done.
  void advance(uint32_t w, uint32_t until, Times* t);
  void wait_for(const WaveWait& wait, Times* t);
  void add_times(const Times& t, uint64_t wake_ns);

  const WaveSchedule* schedule_;
  std::vector<ListState> lists_;
  std::vector<std::thread> threads_;
  std::mutex run_mu_;
  // The run in progress: written by the caller before `generation_` is released.
  const EntryFn* fn_ = nullptr;
  std::chrono::steady_clock::time_point run_start_;
  std::atomic<uint32_t> generation_{0};
  // Worker threads done with the latest run; the next run starts once all are.
  std::atomic<uint32_t> finished_{0};
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> runs_{0}, wall_ns_{0}, task_ns_{0}, wait_ns_{0}, overhead_ns_{0},
      wake_ns_{0}, helped_{0};
};

}  // namespace collage::waves
