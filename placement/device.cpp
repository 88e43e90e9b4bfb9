// Device fingerprint from /proc/cpuinfo.
#include "placement/device.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "collage/placement.h"
#include "core/str_cat.h"

namespace collage {
namespace {

// The value of the first "key : value" line whose key is `key`.
std::string field(std::string_view text, std::string_view key) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view k = line.substr(0, colon);
    while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.remove_suffix(1);
    if (k != key) continue;
    std::string_view v = line.substr(colon + 1);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\r')) v.remove_suffix(1);
    return std::string(v);
  }
  return "";
}

bool relevant_flag(std::string_view f) {
  static constexpr std::string_view kExact[] = {"sse4_1", "sse4_2", "avx",     "avx2",
                                                "fma",    "f16c",   "avx_vnni"};
  for (std::string_view e : kExact)
    if (f == e) return true;
  return f.starts_with("avx512") || f.starts_with("amx");
}

}  // namespace

std::string device_fingerprint_from_cpuinfo(std::string_view cpuinfo, int cores) {
  const std::string model = field(cpuinfo, "model name");
  std::vector<std::string> flags;
  std::istringstream in(field(cpuinfo, "flags"));
  for (std::string f; in >> f;)
    if (relevant_flag(f)) flags.push_back(f);
  std::sort(flags.begin(), flags.end());
  std::string s = str_cat(model.empty() ? std::string_view("?") : std::string_view(model), "|",
                          cores, " cores|");
  for (size_t i = 0; i < flags.size(); ++i) {
    if (i) s.push_back(',');
    s.append(flags[i]);
  }
  return s;
}

std::string code_cache_dir(const std::string& cost_db_path) {
  if (cost_db_path.empty()) return "";
  return (std::filesystem::path(cost_db_path).parent_path() / "kernels").string();
}

absl::StatusOr<std::string> device_fingerprint() {
  std::ifstream in("/proc/cpuinfo");
  if (!in) return absl::UnavailableError("cannot read /proc/cpuinfo for the device fingerprint");
  std::stringstream text;
  text << in.rdbuf();
  return device_fingerprint_from_cpuinfo(
      text.str(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

absl::StatusOr<std::string> placement_device(const PlacementOptions& options) {
  std::string device = options.device;
  if (device.empty()) {
    auto d = device_fingerprint();
    if (!d.ok()) return d.status();
    device = *d;
  }
  if (!options.target.empty() && options.target != "host")
    device = str_cat(device, "|target=", options.target);
  return device;
}

}  // namespace collage
