// Helpers of the whole-model benchmarks: ONNX Runtime's child process, cached arrays, statistics.
#include "bench_util.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "absl/strings/str_format.h"
#include "collage/npz.h"
#include "collage/onnx.h"
#include "collage/passes.h"

extern char** environ;

namespace collage::bench {

namespace fs = std::filesystem;

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream s(list);
  for (std::string item; std::getline(s, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::optional<double> parse_seconds(const std::string& text) {
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !(seconds >= 0)) return std::nullopt;
  return seconds;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double scaled_error(const Tensor& a, const Tensor& b) {
  if (a.type() != b.type()) return INFINITY;
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.get_as_double(i), y = b.get_as_double(i);
    if (std::isnan(x) != std::isnan(y)) return INFINITY;
    if (std::isnan(x)) continue;
    diff = std::max(diff, std::fabs(x - y));
    scale = std::max(scale, std::fabs(y));
  }
  return scale == 0 ? diff : diff / scale;
}

double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

fs::path model_cache() {
  const char* cache = std::getenv("COLLAGE_MODEL_CACHE");
  const char* home = std::getenv("HOME");
  return cache ? fs::path(cache) : fs::path(home ? home : "/tmp") / ".cache/collage/models";
}

absl::StatusOr<std::vector<Tensor>> arrays_by_name(const fs::path& npz,
                                                   const std::vector<std::string>& names) {
  auto arrays = read_npz(npz);
  if (!arrays.ok()) return arrays.status();
  std::vector<Tensor> out;
  for (const std::string& name : names) {
    auto it = std::find_if(arrays->begin(), arrays->end(),
                           [&](const auto& a) { return a.first == name; });
    if (it == arrays->end())
      return absl::NotFoundError(absl::StrFormat("%s: no array '%s'", npz.string(), name));
    out.push_back(it->second);
  }
  return out;
}

std::optional<PeerProcess> PeerProcess::start(const std::string& python,
                                              const std::string& runtime, const fs::path& model,
                                              const fs::path& inputs, int threads,
                                              const fs::path& outputs, std::string* error) {
  int to_child[2], from_child[2];
  // Close-on-exec: a later peer must not inherit this one's pipe ends (this one would then never
  // see the end of its input). The child's own copies, dup'ed onto 0 and 1, stay open.
  if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) {
    *error = "pipe failed";
    return std::nullopt;
  }
  const std::string server = std::string(COLLAGE_SOURCE_DIR) + "/bench/models/peer_server.py";
  std::vector<std::string> argv_s = {python,      server,          model.string(),
                                     inputs.string(), "--runtime", runtime,
                                     "--threads", std::to_string(threads)};
  if (!outputs.empty()) argv_s.insert(argv_s.end(), {"--outputs", outputs.string()});
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
  for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]})
    posix_spawn_file_actions_addclose(&actions, fd);
  PeerProcess p;
  const int rc = posix_spawn(&p.pid_, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(to_child[0]);
  close(from_child[1]);
  p.in_ = fdopen(to_child[1], "w");
  p.out_ = fdopen(from_child[0], "r");
  if (rc != 0) {
    *error = absl::StrFormat("cannot start %s: %s", python, std::strerror(rc));
    return std::nullopt;
  }
  if (p.read_line() != "ready") {
    *error = runtime + " (peer_server.py) did not start; is " + python + " the .venv?";
    return std::nullopt;
  }
  return p;
}

PeerProcess& PeerProcess::operator=(PeerProcess&& o) noexcept {
  std::swap(pid_, o.pid_);
  std::swap(in_, o.in_);
  std::swap(out_, o.out_);
  return *this;
}

PeerProcess::~PeerProcess() {
  if (in_) std::fclose(in_);  // end of input ends the server
  if (out_) std::fclose(out_);
  if (pid_ > 0) waitpid(pid_, nullptr, 0);
}

PeerProcess::Times PeerProcess::time(int64_t n) {
  std::fprintf(in_, "%lld\n", static_cast<long long>(n));
  std::fflush(in_);
  // "WALL... ; CPU...": a reply without both halves, or of another count, is a failed one.
  const std::string reply = read_line();
  const size_t split = reply.find(';');
  if (split == std::string::npos) return {};
  Times t;
  std::istringstream wall(reply.substr(0, split)), cpu(reply.substr(split + 1));
  for (double v; wall >> v;) t.wall.push_back(v);
  for (double v; cpu >> v;) t.cpu.push_back(v);
  if (t.wall.size() != static_cast<size_t>(n) || t.cpu.size() != t.wall.size()) return {};
  return t;
}

std::string PeerProcess::read_line() {
  std::string s;
  for (int c; out_ && (c = std::fgetc(out_)) != EOF && c != '\n';) s += static_cast<char>(c);
  return s;
}

std::optional<CachedModel> load_cached_model(const Context& ctx, const std::string& name) {
  const fs::path cache = model_cache();
  auto g = import_onnx_file(ctx, cache / (name + ".onnx"));
  if (g.ok()) g = run_passes(ctx, *g);
  if (!g.ok()) {
    std::printf("%s: %s (tests/models/build_models.sh --only %s makes it)\n\n", name.c_str(),
                std::string(g.status().message()).c_str(), name.c_str());
    return std::nullopt;
  }
  std::vector<std::string> in_names, out_names;
  for (ValueId v : g->inputs()) in_names.push_back(g->value(v).name);
  for (ValueId v : g->outputs()) out_names.push_back(g->value(v).name);
  auto inputs = arrays_by_name(cache / (name + ".inputs.npz"), in_names);
  auto expected = arrays_by_name(cache / (name + ".outputs.npz"), out_names);
  if (!inputs.ok() || !expected.ok()) {
    std::printf("%s: %s\n\n", name.c_str(),
                std::string((inputs.ok() ? expected.status() : inputs.status()).message()).c_str());
    return std::nullopt;
  }
  return CachedModel{*std::move(g), *std::move(inputs), *std::move(expected)};
}

}  // namespace collage::bench
