// The tuning log: JSON-lines records, loading with corrupt-line skipping, appending.
#include "collage/tuning_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/str_cat.h"
#include "nlohmann/json.hpp"

namespace collage::tune {

std::string record_to_json(const TuningRecord& r) {
  nlohmann::ordered_json j;
  j["device"] = r.device;
  j["signature"] = r.signature;
  nlohmann::ordered_json knobs = nlohmann::ordered_json::object();
  for (const auto& [name, value] : r.knobs) knobs[name] = value;
  j["knobs"] = knobs;
  j["ms"] = r.ms;
  j["gflops"] = r.gflops;
  return j.dump();
}

absl::StatusOr<TuningRecord> record_from_json(const std::string& line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  if (!j.is_object()) return absl::InvalidArgumentError("not a JSON object");
  TuningRecord r;
  auto string_field = [&](const char* name, std::string& out) -> absl::Status {
    auto it = j.find(name);
    if (it == j.end() || !it->is_string())
      return absl::InvalidArgumentError(str_cat("field '", name, "' missing or not a string"));
    out = it->get<std::string>();
    return absl::OkStatus();
  };
  if (absl::Status s = string_field("device", r.device); !s.ok()) return s;
  if (absl::Status s = string_field("signature", r.signature); !s.ok()) return s;
  auto knobs = j.find("knobs");
  if (knobs == j.end() || !knobs->is_object())
    return absl::InvalidArgumentError("field 'knobs' missing or not an object");
  for (auto it = knobs->begin(); it != knobs->end(); ++it) {
    if (!it->is_number_integer())
      return absl::InvalidArgumentError(str_cat("knob '", it.key(), "' is not an integer"));
    r.knobs[it.key()] = it->get<int64_t>();
  }
  auto ms = j.find("ms");
  if (ms == j.end() || !ms->is_number() || !(ms->get<double>() > 0) ||
      !std::isfinite(ms->get<double>()))
    return absl::InvalidArgumentError("field 'ms' missing or not a positive number");
  r.ms = ms->get<double>();
  if (auto gf = j.find("gflops"); gf != j.end() && gf->is_number()) r.gflops = gf->get<double>();
  return r;
}

absl::StatusOr<TuningLog> TuningLog::load(const std::string& path, std::string device,
                                          std::vector<std::string>* warnings) {
  TuningLog log(std::move(device));
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return log;
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(str_cat("cannot read tuning log '", path, "'"));
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    absl::StatusOr<TuningRecord> r = record_from_json(line);
    if (!r.ok()) {
      if (warnings)
        warnings->push_back(str_cat("tuning log '", path, "' line ", number,
                                    " skipped: ", r.status().message()));
      continue;
    }
    log.add(*r);
  }
  return log;
}

void TuningLog::add(const TuningRecord& r) {
  if (r.device != device_) return;
  auto it = best_.find(r.signature);
  if (it == best_.end() || r.ms < it->second.ms) best_[r.signature] = r;
}

const Knobs* TuningLog::find(const std::string& signature) const {
  const TuningRecord* r = best(signature);
  return r ? &r->knobs : nullptr;
}

const TuningRecord* TuningLog::best(const std::string& signature) const {
  auto it = best_.find(signature);
  return it == best_.end() ? nullptr : &it->second;
}

absl::Status append_record(const std::string& path, const TuningRecord& r) {
  const std::string line = record_to_json(r) + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return absl::PermissionDeniedError(
        str_cat("cannot open tuning log '", path, "' for appending: ", std::strerror(errno)));
  // O_APPEND with one write per line: concurrent tuners never interleave inside a line.
  const ssize_t n = ::write(fd, line.data(), line.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size()))
    return absl::InternalError(
        str_cat("cannot append to tuning log '", path, "': ", std::strerror(err)));
  return absl::OkStatus();
}

}  // namespace collage::tune
