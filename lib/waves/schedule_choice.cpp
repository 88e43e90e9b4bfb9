// The remembered measurements of an artifact's wave schedule: key and values.
#include "waves/schedule_choice.h"

#include <cmath>

#include "collage/subgraph.h"
#include "core/str_cat.h"

namespace collage::waves {

std::string schedule_choice_key(const std::vector<ScheduleKernel>& kernels,
                                const std::vector<ScheduleTensor>& tensors, uint64_t arena_bytes,
                                const WaveOptions& options) {
  std::string key = str_cat(
      "executor=", static_cast<int>(options.executor), "|workers=", options.workers,
      "|teams=", static_cast<int>(options.scheduler.teams),
      "|merge=", options.scheduler.merge_waves, "|select=", options.scheduler.select_variants,
      "|repeats=", options.profile_repeats, "|runs=", options.measure_runs,
      "|margin=", options.waves_margin, "|arena=", arena_bytes);
  for (const ScheduleKernel& k : kernels) {
    const KernelRecord& r = k.kernel->record();
    key += str_cat("|k:", r.module, ":", r.entry, ":",
                   stable_hash(std::string_view(reinterpret_cast<const char*>(r.params.data()),
                                                r.params.size())),
                   ":", k.task_count, ":");
    for (uint32_t t : k.reads) key += str_cat(t, ",");
    key += ">";
    for (uint32_t t : k.writes) key += str_cat(t, ",");
  }
  for (const ScheduleTensor& t : tensors)
    key += str_cat("|t:", static_cast<int>(t.where), ":", t.location, ":",
                   static_cast<int>(t.type.dtype), ":", shape_to_string(t.type.shape));
  // The key itself can be long (a kernel per node): the store needs only what tells keys apart.
  return str_cat("schedule ", kernels.size(), " kernels ", stable_hash(key));
}

std::vector<double> encode_schedule_choice(const RememberedSchedule& s) {
  std::vector<double> v = {s.teams_pinned ? 1.0 : 0.0, s.teams_measured ? 1.0 : 0.0,
                           s.sequential_ms, s.waves_ms, s.waves_preferred ? 1.0 : 0.0};
  for (const KernelProfile& p : s.profiles) {
    v.push_back(p.exclusive ? 1 : 0);
    v.push_back(static_cast<double>(p.task_us.size()));
    v.insert(v.end(), p.task_us.begin(), p.task_us.end());
    v.push_back(static_cast<double>(p.pinned_us.size()));
    v.insert(v.end(), p.pinned_us.begin(), p.pinned_us.end());
  }
  return v;
}

std::optional<RememberedSchedule> decode_schedule_choice(const std::vector<double>& values,
                                                         size_t num_kernels) {
  if (values.size() < 5) return std::nullopt;
  RememberedSchedule s;
  s.teams_pinned = values[0] != 0;
  s.teams_measured = values[1] != 0;
  s.sequential_ms = values[2];
  s.waves_ms = values[3];
  s.waves_preferred = values[4] != 0;
  size_t i = 5;
  // A count that is not a small whole number, or runs past the end, makes the record unusable.
  auto count = [&](size_t& n) {
    if (i >= values.size() || !(values[i] >= 0) || values[i] != std::floor(values[i]) ||
        values[i] > static_cast<double>(values.size() - i - 1))
      return false;
    n = static_cast<size_t>(values[i++]);
    return true;
  };
  for (size_t k = 0; k < num_kernels; ++k) {
    if (i >= values.size()) return std::nullopt;
    KernelProfile p;
    p.exclusive = values[i++] != 0;
    size_t n = 0;
    if (!count(n) || n == 0) return std::nullopt;
    p.task_us.assign(values.begin() + static_cast<std::ptrdiff_t>(i),
                     values.begin() + static_cast<std::ptrdiff_t>(i + n));
    i += n;
    size_t m = 0;
    if (!count(m) || (m != 0 && m != n)) return std::nullopt;
    p.pinned_us.assign(values.begin() + static_cast<std::ptrdiff_t>(i),
                       values.begin() + static_cast<std::ptrdiff_t>(i + m));
    i += m;
    s.profiles.push_back(std::move(p));
  }
  if (i != values.size()) return std::nullopt;
  return s;
}

}  // namespace collage::waves
