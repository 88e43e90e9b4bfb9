// The wave schedule of a plan: decoded from the FlatBuffer with its counts bounded, and the
// kernel dependencies it is checked against.
#include "artifact_generated.h"
#include "plan_decode.h"

namespace collage::rt {
namespace {

namespace fb = collage::artifact::fb;

constexpr uint32_t kScheduleVersion = 1;

Status corrupt(const std::string& what) {
  return Status(Code::corrupt, "corrupt artifact plan: wave schedule: " + what);
}

}  // namespace

Status decode_wave_schedule(const fb::WaveSchedule* s, Program* p) {
  // A schedule of a later version is optional data this runtime does not understand: the
  // plan still runs, sequentially.
  if (!s || s->version() != kScheduleVersion) return Status();
  waves::WaveSchedule& out = p->schedule;
  if (!s->chunks() || s->chunks()->size() != p->kernels.size())
    return corrupt(cat("chunk counts for ", s->chunks() ? s->chunks()->size() : 0, " of ",
                       p->kernels.size(), " kernels"));
  out.chunks.assign(s->chunks()->begin(), s->chunks()->end());
  if (s->threads()) {
    if (s->threads()->size() != p->kernels.size())
      return corrupt(cat("thread counts for ", s->threads()->size(), " of ", p->kernels.size(),
                         " kernels"));
    out.threads.assign(s->threads()->begin(), s->threads()->end());
  }
  const uint32_t workers = s->workers() ? s->workers()->size() : 0;
  if (workers == 0 || workers > waves::kMaxWorkers)
    return corrupt(cat(workers, " workers (1 to ", waves::kMaxWorkers, ")"));
  uint64_t entries = 0;
  for (uint32_t w = 0; w < workers; ++w) {
    const fb::WaveWorker* fw = s->workers()->Get(w);
    waves::WorkerList& list = out.workers.emplace_back();
    const uint64_t n = fw->entries() ? fw->entries()->size() : 0;
    const uint64_t m = fw->waits() ? fw->waits()->size() : 0;
    entries += n;
    if (entries > waves::kMaxEntries || m > waves::kMaxEntries * waves::kMaxWorkers)
      return corrupt(cat("worker ", w, ": too many entries or waits"));
    for (uint64_t i = 0; i < n; ++i) {
      const fb::WaveEntry* e = fw->entries()->Get(static_cast<uint32_t>(i));
      list.entries.push_back({e->kernel(), e->chunk(), e->wait_begin(), e->wait_end()});
    }
    for (uint64_t i = 0; i < m; ++i) {
      const fb::WaveWait* wt = fw->waits()->Get(static_cast<uint32_t>(i));
      list.waits.push_back({wt->worker(), wt->count()});
    }
  }
  if (s->wave_of_kernel()) out.wave_of_kernel.assign(s->wave_of_kernel()->begin(),
                                                     s->wave_of_kernel()->end());
  if (s->kernel_us()) out.kernel_us.assign(s->kernel_us()->begin(), s->kernel_us()->end());
  if (s->exclusive()) out.exclusive.assign(s->exclusive()->begin(), s->exclusive()->end());
  out.num_waves = s->num_waves();
  out.num_segments = s->num_segments();
  out.waves_ms = s->waves_ms();
  out.sequential_ms = s->sequential_ms();
  if (s->preferred() != fb::ExecutorKind::Sequential && s->preferred() != fb::ExecutorKind::Waves)
    return corrupt(cat("executor kind ", static_cast<int>(s->preferred())));
  out.preferred = s->preferred() == fb::ExecutorKind::Waves ? waves::Executor::waves
                                                             : waves::Executor::sequential;
  p->has_schedule = true;
  return Status();
}

std::vector<std::vector<uint32_t>> program_dependencies(const Program& p) {
  std::vector<waves::TensorSpan> tensors;
  for (const TensorInfo& t : p.tensors)
    tensors.push_back({t.storage == Storage::arena, t.location, t.location + t.bytes});
  std::vector<waves::KernelAccess> kernels;
  for (const KernelInfo& k : p.kernels) {
    waves::KernelAccess& a = kernels.emplace_back();
    a.reads.assign(k.args.begin(), k.args.begin() + k.num_inputs);
    a.writes.assign(k.args.begin() + k.num_inputs, k.args.end());
  }
  return waves::kernel_dependencies(kernels, tensors);
}

}  // namespace collage::rt
