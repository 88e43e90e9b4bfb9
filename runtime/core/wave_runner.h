// WaveRunner: persistent worker threads that execute a wave schedule. Each worker walks its own
// entry list; an entry's waits poll (then sleep) on other workers' step counters, which are
// published with a store after every entry, so there is no barrier between operators. A counter
// knows who sleeps on it and for what count, so publishing costs a system call only when it
// wakes someone. A worker whose wait finds the list it waits on stalled between entries (its
// thread descheduled on a busy machine, or not yet awake) runs that list's next entry itself, in
// the list's order, so a run never waits long for a thread the OS does not run. Shared by the
// runtime's wave executor and the compiler's executor measurement.
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
};

class WaveRunner {
 public:
  // Runs one entry; must not throw. Usually called from the worker that owns the entry, but any
  // worker may run it (the entries of one list still run one after another, each after its
  // waits), so it must not depend on the calling thread.
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
  // A value that threads wait on, with the number of threads asleep on it (or about to sleep):
  // a writer makes the wake-up system call only when there are some. A worker's step counter
  // also counts the entries of its list claimed (by it or by a helper, once the entry's waits
  // hold); claimed == value means no entry of the list is running.
  struct alignas(64) Counter {
    std::atomic<uint32_t> value{0};
    std::atomic<uint32_t> sleepers{0};
    std::atomic<uint32_t> claimed{0};
  };
  // What a worker asleep on a step counter waits for: that worker's counter to reach `count`
  // (kNotParked: it does not sleep on one). Its producer wakes it only then.
  static constexpr uint32_t kNotParked = UINT32_MAX;
  struct alignas(64) Parked {
    std::atomic<uint32_t> worker{kNotParked};
    std::atomic<uint32_t> count{0};
  };
  struct WorkerTimes {
    uint64_t task_ns = 0, wait_ns = 0, busy_ns = 0, wake_ns = 0;
  };
  void worker_loop(uint32_t worker);
  // Runs the list of `worker` for the current run; returns its times.
  WorkerTimes run_list(uint32_t worker);
  // Worker `self` waits until `wait` holds, helping the list it waits on when that stalls.
  void wait_for(uint32_t self, const WaveWait& wait, WorkerTimes* t);
  // Runs the next entry of `owner`'s list on the calling worker when no entry of that list is
  // running, the entry's waits hold and it is not exclusive; whether it did.
  bool try_help(uint32_t owner, WorkerTimes* t);
  // Runs entry `index` of `owner`'s list (claimed, its waits done) and publishes it.
  void run_entry(uint32_t owner, uint32_t index, WorkerTimes* t);
  // Sets the step counter of `worker` and wakes the workers asleep until it reached `count`.
  void publish_step(uint32_t worker, uint32_t count);
  // Adds to `c` and wakes its sleepers, if any.
  static void add(Counter& c, uint32_t delta);
  // Waits until `c` differs from `old` (polls for `spin`, then yielding for `yield`, then
  // sleeps); returns the new value (acquire).
  static uint32_t await_change(Counter& c, uint32_t old, std::chrono::steady_clock::duration spin,
                               std::chrono::steady_clock::duration yield);

  const WaveSchedule* schedule_;
  std::vector<Counter> counters_;  // per worker: entries done in the current run
  std::vector<Parked> parked_;     // per worker
  std::vector<std::thread> threads_;
  std::mutex run_mu_;
  // The run in progress: written by the caller before `generation_` is released.
  const EntryFn* fn_ = nullptr;
  std::chrono::steady_clock::time_point run_start_;
  Counter generation_;  // runs started
  Counter finished_;    // workers (other than 0) done with the current run
  std::atomic<bool> stop_{false};
  std::vector<WorkerTimes> times_;  // per worker, of the current run
  mutable std::mutex stats_mu_;
  WaveRunStats stats_;
};

}  // namespace collage::waves
