// check_wave_schedule: coverage, bounds, then a simulation of the workers that finds deadlocks
// and, with vector clocks, every dependency the waits fail to order.
#include <algorithm>

#include "wave_schedule.h"

namespace collage::waves {
namespace {

std::string str(uint64_t v) {
  return std::to_string(v);
}

std::string entry_name(uint32_t worker, size_t index, const WaveEntry& e) {
  return "worker " + str(worker) + " entry " + str(index) + " (kernel " + str(e.kernel) +
         " chunk " + str(e.chunk) + ")";
}

}  // namespace

std::string check_wave_schedule(const WaveSchedule& s, const std::vector<int32_t>& task_counts,
                                const std::vector<std::vector<uint32_t>>& deps) {
  const size_t num_kernels = task_counts.size();
  const uint32_t num_workers = static_cast<uint32_t>(s.workers.size());
  if (s.chunks.size() != num_kernels)
    return str(s.chunks.size()) + " chunk counts for " + str(num_kernels) + " kernels";
  if (num_workers == 0 || num_workers > kMaxWorkers)
    return str(num_workers) + " workers (1 to " + str(kMaxWorkers) + ")";
  std::vector<size_t> first_chunk(num_kernels + 1, 0);
  for (size_t k = 0; k < num_kernels; ++k) {
    if (s.chunks[k] < 1 || s.chunks[k] > static_cast<uint32_t>(task_counts[k]))
      return "kernel " + str(k) + ": " + str(s.chunks[k]) + " chunks of " + str(task_counts[k]) +
             " tasks";
    first_chunk[k + 1] = first_chunk[k] + s.chunks[k];
  }
  if (!s.threads.empty() && s.threads.size() != num_kernels)
    return str(s.threads.size()) + " thread counts for " + str(num_kernels) + " kernels";
  for (size_t k = 0; k < s.threads.size(); ++k) {
    if (s.threads[k] > num_workers)
      return "kernel " + str(k) + ": runs with " + str(s.threads[k]) + " threads on " +
             str(num_workers) + " workers";
    if (s.threads[k] && k < s.exclusive.size() && s.exclusive[k])
      return "kernel " + str(k) + ": exclusive, yet limited to " + str(s.threads[k]) + " threads";
  }
  uint64_t total = 0;
  for (const WorkerList& w : s.workers) total += w.entries.size();
  if (total != first_chunk[num_kernels])
    return str(total) + " entries for " + str(first_chunk[num_kernels]) + " chunks";
  if (total > kMaxEntries || total * num_workers > kMaxCheckCells)
    return str(total) + " entries on " + str(num_workers) + " workers is too many";

  // Every chunk exactly once; where each chunk runs.
  std::vector<std::pair<uint32_t, uint32_t>> where(total, {num_workers, 0});
  for (uint32_t w = 0; w < num_workers; ++w) {
    const WorkerList& list = s.workers[w];
    for (size_t i = 0; i < list.entries.size(); ++i) {
      const WaveEntry& e = list.entries[i];
      if (e.kernel >= num_kernels || e.chunk >= s.chunks[e.kernel])
        return entry_name(w, i, e) + ": no such chunk";
      if (e.wait_begin > e.wait_end || e.wait_end > list.waits.size())
        return entry_name(w, i, e) + ": waits outside the worker's wait list";
      for (uint32_t j = e.wait_begin; j < e.wait_end; ++j)
        if (list.waits[j].worker >= num_workers ||
            list.waits[j].count > s.workers[list.waits[j].worker].entries.size())
          return entry_name(w, i, e) + ": waits for a worker or entry that does not exist";
      auto& slot = where[first_chunk[e.kernel] + e.chunk];
      if (slot.first != num_workers) return entry_name(w, i, e) + ": the chunk runs twice";
      slot = {w, static_cast<uint32_t>(i)};
    }
  }

  // Per kernel and worker: how many entries of that worker must be done before the kernel is.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> done_after(num_kernels);
  for (size_t k = 0; k < num_kernels; ++k) {
    std::vector<uint32_t> need(num_workers, 0);
    for (size_t c = first_chunk[k]; c < first_chunk[k + 1]; ++c)
      need[where[c].first] = std::max(need[where[c].first], where[c].second + 1);
    for (uint32_t w = 0; w < num_workers; ++w)
      if (need[w]) done_after[k].push_back({w, need[w]});
  }

  // Simulate: a worker runs its next entry once its waits hold. clock[w][i] is the vector clock
  // after entry i of worker w: how many entries of each worker happen before it, inclusive.
  std::vector<std::vector<std::vector<uint32_t>>> clock(num_workers);
  std::vector<uint32_t> done(num_workers, 0);
  std::vector<std::vector<uint32_t>> now(num_workers, std::vector<uint32_t>(num_workers, 0));
  for (uint64_t finished = 0; finished < total;) {
    bool progress = false;
    for (uint32_t w = 0; w < num_workers; ++w) {
      const WorkerList& list = s.workers[w];
      while (done[w] < list.entries.size()) {
        const WaveEntry& e = list.entries[done[w]];
        bool ready = true;
        for (uint32_t j = e.wait_begin; j < e.wait_end && ready; ++j)
          ready = done[list.waits[j].worker] >= list.waits[j].count;
        if (!ready) break;
        std::vector<uint32_t>& vc = now[w];
        for (uint32_t j = e.wait_begin; j < e.wait_end; ++j) {
          const WaveWait& wait = list.waits[j];
          if (wait.count == 0 || wait.worker == w) continue;
          const std::vector<uint32_t>& other = clock[wait.worker][wait.count - 1];
          for (uint32_t u = 0; u < num_workers; ++u) vc[u] = std::max(vc[u], other[u]);
        }
        vc[w] = done[w];
        for (uint32_t p : deps[e.kernel])
          for (const auto& [u, need] : done_after[p])
            if (vc[u] < need)
              return entry_name(w, done[w], e) + " may run before kernel " + str(p) +
                     " has finished on worker " + str(u);
        vc[w] = done[w] + 1;
        clock[w].push_back(vc);
        ++done[w];
        ++finished;
        progress = true;
      }
    }
    if (!progress) return "the workers deadlock (waits form a cycle)";
  }
  return "";
}

}  // namespace collage::waves
