// check_program: the dataflow of the kernel sequence and the memory plan of its arena.
#include <map>

#include "plan_decode.h"

namespace collage::rt {
namespace {

Status corrupt(const std::string& what) {
  return Status(Code::corrupt, "corrupt artifact plan: " + what);
}

std::string kernel_label(const Program& p, size_t k) {
  return cat("kernel ", k, " (", p.kernels[k].backend, ": ", p.kernels[k].name, ")");
}

}  // namespace

Status check_program(const Program& p) {
  const size_t n = p.tensors.size();
  std::vector<bool> written(n, false);
  std::vector<int64_t> first(n, -1), last(n, -1);
  for (size_t t = 0; t < n; ++t)
    written[t] =
        p.tensors[t].storage == Storage::input || p.tensors[t].storage == Storage::constant;
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const KernelInfo& kernel = p.kernels[k];
    for (size_t a = 0; a < kernel.args.size(); ++a) {
      const uint32_t t = kernel.args[a];
      const TensorInfo& tensor = p.tensors[t];
      if (a < kernel.num_inputs) {
        if (!written[t])
          return corrupt(cat(kernel_label(p, k), " reads tensor '", tensor.name,
                             "' before anything writes it"));
        last[t] = static_cast<int64_t>(k);
        continue;
      }
      if (written[t])
        return corrupt(cat(kernel_label(p, k), " writes tensor '", tensor.name,
                           "', which is written already (or is an input or a constant)"));
      written[t] = true;
      first[t] = last[t] = static_cast<int64_t>(k);
    }
  }
  for (size_t i = 0; i < p.outputs.size(); ++i)
    if (!written[p.outputs[i]])
      return corrupt(
          cat("graph output ", i, " '", p.tensors[p.outputs[i]].name, "' is written by no kernel"));

  // Sweep the kernels with the arena ranges of the live tensors; a tensor becomes live at the
  // kernel that writes it and dies after its last reader.
  std::vector<std::vector<uint32_t>> dies_after(p.kernels.size());
  for (size_t t = 0; t < n; ++t)
    if (p.tensors[t].storage == Storage::arena && first[t] >= 0 && p.tensors[t].bytes > 0)
      dies_after[last[t]].push_back(static_cast<uint32_t>(t));
  std::map<uint64_t, uint32_t> live;  // arena offset -> tensor
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const KernelInfo& kernel = p.kernels[k];
    for (size_t a = kernel.num_inputs; a < kernel.args.size(); ++a) {
      const uint32_t t = kernel.args[a];
      const TensorInfo& tensor = p.tensors[t];
      if (tensor.storage != Storage::arena || tensor.bytes == 0) continue;
      const uint64_t begin = tensor.location, end = begin + tensor.bytes;
      auto next = live.lower_bound(begin);
      const bool clash_next = next != live.end() && next->first < end;
      const bool clash_prev = next != live.begin() && [&] {
        auto prev = std::prev(next);
        return prev->first + p.tensors[prev->second].bytes > begin;
      }();
      if (clash_next || clash_prev) {
        const uint32_t other = clash_next ? next->second : std::prev(next)->second;
        return corrupt(cat(kernel_label(p, k), " writes tensor '", tensor.name,
                           "' over the arena bytes of tensor '", p.tensors[other].name,
                           "', which is still in use"));
      }
      live.emplace(begin, t);
    }
    for (uint32_t t : dies_after[k]) live.erase(p.tensors[t].location);
  }
  if (!p.has_schedule) return Status();
  std::vector<int32_t> task_counts;
  for (const KernelInfo& kernel : p.kernels) task_counts.push_back(kernel.task_count);
  const std::string bad =
      waves::check_wave_schedule(p.schedule, task_counts, program_dependencies(p));
  return bad.empty() ? Status() : corrupt("wave schedule: " + bad);
}

}  // namespace collage::rt
