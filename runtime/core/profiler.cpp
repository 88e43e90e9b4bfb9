// Profiler: events in memory, JSON written by hand (the runtime links no JSON library).
#include "profiler.h"

#include <algorithm>
#include <cstdio>

namespace collage::rt {
namespace {

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

// Microseconds with nanosecond precision, as Chrome traces want them.
std::string micros(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000));
  return buf;
}

}  // namespace

void Profiler::set_enabled(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  if (on && !enabled()) {
    events_.clear();
    origin_ = std::chrono::steady_clock::now();
  }
  enabled_.store(on, std::memory_order_relaxed);
}

int32_t Profiler::thread_ordinal() {
  const std::thread::id me = std::this_thread::get_id();
  auto it = std::find(threads_.begin(), threads_.end(), me);
  if (it != threads_.end()) return static_cast<int32_t>(it - threads_.begin());
  threads_.push_back(me);
  return static_cast<int32_t>(threads_.size() - 1);
}

void Profiler::add_run(const Program& program, const ExecPlan& plan,
                       const std::vector<StepTiming>& timings,
                       std::chrono::steady_clock::time_point start,
                       std::chrono::steady_clock::time_point end) {
  auto ns = [&](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - origin_).count();
  };
  std::lock_guard<std::mutex> lock(mu_);
  const int32_t thread = thread_ordinal();
  events_.push_back({&program, -1, thread, ns(start), ns(end) - ns(start)});
  for (size_t i = 0; i < timings.size() && i < plan.steps.size(); ++i)
    events_.push_back({&program, static_cast<int32_t>(plan.steps[i].kernel_index), thread,
                       ns(timings[i].start), ns(timings[i].end) - ns(timings[i].start)});
}

std::string Profiler::json() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  for (size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    out += i ? ",\n" : "\n";
    out += "{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(e.thread) +
           ",\"ts\":" + micros(e.start_ns) + ",\"dur\":" + micros(e.duration_ns) + ",\"name\":";
    const Program& program = *e.program;
    if (e.kernel < 0) {
      std::string name = program.graph_name.empty() ? "run" : "run " + program.graph_name;
      if (program.batch) name += " (batch " + std::to_string(program.batch) + ")";
      append_json_string(out, name);
      out += ",\"cat\":\"run\"}";
      continue;
    }
    const KernelInfo& k = program.kernels[e.kernel];
    append_json_string(out, k.name);
    out += ",\"cat\":";
    append_json_string(out, k.backend);
    out += ",\"args\":{\"kernel\":" + std::to_string(e.kernel) + ",\"backend\":";
    append_json_string(out, k.backend);
    out += ",\"module\":";
    append_json_string(out, program.modules[k.module]);
    out += ",\"entry\":";
    append_json_string(out, k.entry);
    out += "}}";
  }
  out += "\n]}\n";
  return out;
}

}  // namespace collage::rt
