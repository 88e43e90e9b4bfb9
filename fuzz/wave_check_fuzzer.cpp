// libFuzzer target for the wave schedule check (runtime/core/wave_check.cpp), differential: each
// input is decoded into a small schedule (up to 6 kernels of 1 to 3 tasks, 4 workers, their
// entries and waits) and a dependency list, and check_wave_schedule's verdict is compared with a plain
// happens-before oracle: every chunk exactly once, waits in bounds, no cycle among the
// program-order and wait edges, and every chunk of a dependency reachable from every chunk of
// the kernel depending on it. A schedule the check accepts but the oracle rejects (it could
// deadlock or race when run) or the reverse is a bug and aborts. Built and run by
// fuzz/run_fuzzer.sh (FUZZ_TARGET=wave_check).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "wave_schedule.h"

namespace {

using namespace collage::waves;

struct Case {
  WaveSchedule schedule;
  std::vector<int32_t> task_counts;
  std::vector<std::vector<uint32_t>> deps;
};

// Mostly well-formed schedules (every chunk once, placed in kernel order on the worker the
// input picks, waiting for entries already placed or a little beyond), so that the check's
// simulation and dependency test are reached; one input in eight is damaged in one field.
Case decode(FuzzedDataProvider& in) {
  Case c;
  const uint32_t kernels = in.ConsumeIntegralInRange<uint32_t>(1, 6);
  const uint32_t workers = in.ConsumeIntegralInRange<uint32_t>(1, 4);
  c.schedule.workers.resize(workers);
  for (uint32_t k = 0; k < kernels; ++k) {
    c.task_counts.push_back(in.ConsumeIntegralInRange<int32_t>(1, 3));
    c.schedule.chunks.push_back(in.ConsumeIntegralInRange<uint32_t>(1, c.task_counts[k]));
    std::vector<uint32_t>& d = c.deps.emplace_back();
    for (uint32_t j = 0; j < k; ++j)
      if (in.ConsumeBool()) d.push_back(j);  // ascending and earlier, as kernel_dependencies
  }
  for (uint32_t k = 0; k < kernels; ++k)
    for (uint32_t chunk = 0; chunk < c.schedule.chunks[k]; ++chunk) {
      WorkerList& list = c.schedule.workers[in.ConsumeIntegralInRange<uint32_t>(0, workers - 1)];
      WaveEntry e{k, chunk, static_cast<uint32_t>(list.waits.size()), 0};
      const uint32_t waits = in.ConsumeIntegralInRange<uint32_t>(0, 3);
      for (uint32_t j = 0; j < waits; ++j) {
        const uint32_t w = in.ConsumeIntegralInRange<uint32_t>(0, workers - 1);
        const uint32_t placed = static_cast<uint32_t>(c.schedule.workers[w].entries.size());
        list.waits.push_back({w, in.ConsumeIntegralInRange<uint32_t>(0, placed + 2)});
      }
      e.wait_end = static_cast<uint32_t>(list.waits.size());
      list.entries.push_back(e);
    }
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {  // one damaged field
    const uint32_t what = in.ConsumeIntegralInRange<uint32_t>(0, 6);
    WorkerList& list = c.schedule.workers[in.ConsumeIntegralInRange<uint32_t>(0, workers - 1)];
    const uint32_t k = in.ConsumeIntegralInRange<uint32_t>(0, kernels - 1);
    const uint32_t value = in.ConsumeIntegralInRange<uint32_t>(0, 9);
    if (what == 0) c.schedule.chunks[k] = value;
    if (what == 1) c.task_counts[k] = static_cast<int32_t>(value);
    if (what == 2) c.schedule.workers.push_back({});
    if (what >= 3 && !list.entries.empty()) {
      WaveEntry& e = list.entries[value % list.entries.size()];
      if (what == 3) e.kernel = value;
      if (what == 4) e.chunk = value;
      if (what == 5) e.wait_end += value;
      if (what == 6) list.entries.push_back(e);  // a chunk twice
    }
  }
  return c;
}

// The oracle: "" when the schedule is well formed, free of deadlock and orders every dependency.
std::string oracle(const Case& c) {
  const WaveSchedule& s = c.schedule;
  const size_t kernels = c.task_counts.size();
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> chunks_at(kernels);  // (worker, index)
  std::vector<std::pair<uint32_t, uint32_t>> node_of;  // entry -> (worker, index)
  std::vector<std::vector<size_t>> id(s.workers.size());
  for (uint32_t w = 0; w < s.workers.size(); ++w)
    for (uint32_t i = 0; i < s.workers[w].entries.size(); ++i) {
      id[w].push_back(node_of.size());
      node_of.push_back({w, i});
    }
  for (size_t k = 0; k < kernels; ++k)
    if (s.chunks[k] < 1 || s.chunks[k] > static_cast<uint32_t>(c.task_counts[k]))
      return "chunk count";
  std::vector<std::vector<int>> seen(kernels);
  for (size_t k = 0; k < kernels; ++k) seen[k].assign(s.chunks[k], 0);
  // Edges: from the entry that must finish first to the entry that waits.
  std::vector<std::vector<size_t>> after(node_of.size());
  for (uint32_t w = 0; w < s.workers.size(); ++w) {
    const WorkerList& list = s.workers[w];
    for (uint32_t i = 0; i < list.entries.size(); ++i) {
      const WaveEntry& e = list.entries[i];
      if (e.kernel >= kernels || e.chunk >= s.chunks[e.kernel]) return "no such chunk";
      if (seen[e.kernel][e.chunk]++) return "chunk twice";
      chunks_at[e.kernel].push_back({w, i});
      if (e.wait_begin > e.wait_end || e.wait_end > list.waits.size()) return "wait range";
      for (uint32_t j = e.wait_begin; j < e.wait_end; ++j) {
        const WaveWait& wait = list.waits[j];
        if (wait.worker >= s.workers.size() ||
            wait.count > s.workers[wait.worker].entries.size())
          return "wait target";
        if (wait.count > 0) after[id[wait.worker][wait.count - 1]].push_back(id[w][i]);
      }
      if (i > 0) after[id[w][i - 1]].push_back(id[w][i]);
    }
  }
  for (size_t k = 0; k < kernels; ++k)
    for (int n : seen[k])
      if (n != 1) return "chunk missing";
  // Reachability from every entry (the graphs are tiny); a cycle is a deadlock.
  const size_t n = node_of.size();
  std::vector<std::vector<char>> reach(n, std::vector<char>(n, 0));
  for (size_t from = 0; from < n; ++from) {
    std::vector<size_t> stack = after[from];
    while (!stack.empty()) {
      const size_t v = stack.back();
      stack.pop_back();
      if (reach[from][v]) continue;
      reach[from][v] = 1;
      for (size_t u : after[v]) stack.push_back(u);
    }
    if (reach[from][from]) return "deadlock";
  }
  for (size_t k = 0; k < kernels; ++k)
    for (uint32_t p : c.deps[k])
      for (const auto& [pw, pi] : chunks_at[p])
        for (const auto& [kw, ki] : chunks_at[k])
          if (!reach[id[pw][pi]][id[kw][ki]]) return "unordered dependency";
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const Case c = decode(in);
  const std::string check = check_wave_schedule(c.schedule, c.task_counts, c.deps);
  const std::string expected = oracle(c);
  if (check.empty() != expected.empty()) {
    std::fprintf(stderr, "check_wave_schedule: \"%s\"; the oracle: \"%s\"\n", check.c_str(),
                 expected.c_str());
    std::abort();
  }
  return 0;
}
