// The wave schedule of an artifact (Rammer): for every worker an ordered list of task chunks and
// the step-counter waits that order them across workers. Shared, as plain C++, by the compiler's
// wave scheduler (lib/waves), the artifact writer and reader, and the runtime's wave executor.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace collage::waves {

// Bounds the reader enforces, so a hostile artifact cannot ask for absurd work or memory.
inline constexpr uint32_t kMaxWorkers = 256;
inline constexpr uint64_t kMaxEntries = uint64_t{1} << 20;
inline constexpr uint64_t kMaxCheckCells = uint64_t{1} << 24;  // workers x entries of the check

// An entry is done by its worker once its waits hold: worker `worker` has finished its first
// `count` entries.
struct WaveWait {
  uint32_t worker = 0;
  uint32_t count = 0;
};

// Chunk `chunk` of kernel `kernel`: its own tasks chunk_range(task_count, chunks[kernel], chunk).
// Its waits are waits[wait_begin, wait_end) of its worker's list.
struct WaveEntry {
  uint32_t kernel = 0;
  uint32_t chunk = 0;
  uint32_t wait_begin = 0, wait_end = 0;
};

struct WorkerList {
  std::vector<WaveEntry> entries;
  std::vector<WaveWait> waits;
};

enum class Executor : uint8_t { sequential = 0, waves = 1 };

struct WaveSchedule {
  // Per kernel (plan order): the variant, i.e. how many chunks its task_count tasks are grouped
  // into (1 .. task_count). A chunk runs its tasks one after another on one worker.
  std::vector<uint32_t> chunks;
  // Per kernel (plan order; empty: every kernel 0): the threads of its own team it runs with.
  // 0: as it is; a kernel with a team of its own (exclusive) then runs alone with every other
  // worker idle, its team as large as it likes. n >= 1: at most n threads, the worker's included
  // (a library kernel pinned to its worker), so that it runs beside others like any chunk.
  std::vector<uint32_t> threads;
  std::vector<WorkerList> workers;  // worker 0 is the calling thread
  // Per kernel: its wave (breadth-first fringe of the kernel DAG), its profiled time (all its
  // tasks on one worker, microseconds, in the variant it runs as) and whether it runs
  // exclusive; for reports.
  std::vector<uint32_t> wave_of_kernel;
  std::vector<float> kernel_us;
  std::vector<uint8_t> exclusive;
  uint32_t num_waves = 0;
  uint32_t num_segments = 0;  // groups of merged waves; a barrier separates two segments
  // Measured at compile time (median ms of whole runs) and the executor that won.
  double waves_ms = 0, sequential_ms = 0;
  Executor preferred = Executor::sequential;
};

// The own tasks [begin, end) of chunk `chunk` of `chunks` over `task_count` tasks.
inline std::pair<int32_t, int32_t> chunk_range(int32_t task_count, uint32_t chunks,
                                               uint32_t chunk) {
  const int64_t n = task_count;
  return {static_cast<int32_t>(n * chunk / chunks), static_cast<int32_t>(n * (chunk + 1) / chunks)};
}

// What the dependencies of a kernel sequence are computed from: per kernel the tensors it reads
// and writes, per tensor its storage. Arena tensors that share bytes (the memory plan reuses
// them) are one resource; every other tensor is its own.
struct TensorSpan {
  bool arena = false;
  uint64_t begin = 0, end = 0;  // arena byte range
};
struct KernelAccess {
  std::vector<uint32_t> reads, writes;  // tensor ids
};

// For every kernel, the earlier kernels it must run after (ascending): those writing a tensor
// it reads (read after write), and those reading or writing bytes it writes (write after read,
// write after write: arena reuse). Running the kernels in any order that respects these gives
// the results of running them in sequence.
std::vector<std::vector<uint32_t>> kernel_dependencies(const std::vector<KernelAccess>& kernels,
                                                       const std::vector<TensorSpan>& tensors);

// Checks that `schedule` runs every chunk of every kernel exactly once (task_counts: per
// kernel), that no kernel runs with more threads than there are workers, nor both exclusive and
// with limited threads, that its waits name existing workers and entries, that it cannot deadlock, and that
// every chunk of a kernel happens before (by program order and waits) every chunk of a kernel
// depending on it (`deps` as kernel_dependencies gives). Returns "" or what is wrong.
std::string check_wave_schedule(const WaveSchedule& schedule,
                                const std::vector<int32_t>& task_counts,
                                const std::vector<std::vector<uint32_t>>& deps);

}  // namespace collage::waves
