// Cost database: JSON-lines records, appended under flock with one write() per batch of lines.
#include "placement/cost_database.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"
#include "core/str_cat.h"

namespace collage {
namespace {

using Json = nlohmann::ordered_json;

std::string errno_text() {
  return std::strerror(errno);
}

// A file descriptor closed (and so unlocked) on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

int flock_retry(int fd, int op) {
  int r;
  do r = ::flock(fd, op);
  while (r != 0 && errno == EINTR);
  return r;
}

absl::StatusOr<std::string> read_all(int fd, const std::string& path) {
  std::string text;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::UnavailableError(str_cat(path, ": read failed: ", errno_text()));
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

// Reads the whole file under a shared lock; a missing file reads as empty.
absl::StatusOr<std::string> read_locked(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::string();
    return absl::UnavailableError(str_cat(path, ": cannot open: ", errno_text()));
  }
  if (flock_retry(fd.get(), LOCK_SH) != 0)
    return absl::UnavailableError(str_cat(path, ": cannot lock: ", errno_text()));
  return read_all(fd.get(), path);
}

// Calls fn(line_number, line) for each line of `text` (a last line without newline included).
template <typename F>
void for_each_line(std::string_view text, F&& fn) {
  size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    fn(++line_no, text.substr(pos, end - pos));
    pos = end + 1;
  }
}

// Appends `lines` (each ending in '\n') to `path` with one write() under an exclusive lock. A
// file whose last byte is not a newline (a torn line) first gets one, so the new lines stay
// whole. If the path was replaced (prune) between open and lock, the new file is used.
absl::Status append_lines(const std::string& path, const std::string& lines) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  for (int attempt = 0; attempt < 16; ++attempt) {
    Fd fd(::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
    if (fd.get() < 0)
      return absl::UnavailableError(str_cat(path, ": cannot open for append: ", errno_text()));
    if (flock_retry(fd.get(), LOCK_EX) != 0)
      return absl::UnavailableError(str_cat(path, ": cannot lock: ", errno_text()));
    struct stat held, named;
    if (::fstat(fd.get(), &held) != 0)
      return absl::UnavailableError(str_cat(path, ": stat failed: ", errno_text()));
    if (::stat(path.c_str(), &named) != 0 || named.st_ino != held.st_ino ||
        named.st_dev != held.st_dev)
      continue;  // renamed over while we waited for the lock
    char last = '\n';
    if (held.st_size > 0 && ::pread(fd.get(), &last, 1, held.st_size - 1) != 1) last = '\n';
    std::string data;
    data.reserve(lines.size() + 1);
    if (last != '\n') data.push_back('\n');
    data.append(lines);
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::write(fd.get(), data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return absl::UnavailableError(str_cat(path, ": write failed: ", errno_text()));
      done += static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }
  return absl::UnavailableError(str_cat(path, ": the file keeps being replaced; not appended"));
}

// Keeps the newest record of each key (the later one on equal timestamps), so the view does not
// depend on the order in which merged files were appended.
void keep_newest(std::map<CostKey, CostRecord>& records, CostRecord r) {
  auto it = records.find(r.key);
  if (it == records.end())
    records.emplace(r.key, std::move(r));
  else if (r.timestamp >= it->second.timestamp)
    it->second = std::move(r);
}

}  // namespace

bool CostKey::operator<(const CostKey& o) const {
  return std::tie(device, backend, version, hash) <
         std::tie(o.device, o.backend, o.version, o.hash);
}

std::string cost_record_to_line(const CostRecord& r) {
  Json j;
  j["device"] = r.key.device;
  j["backend"] = r.key.backend;
  j["version"] = r.key.version;
  j["hash"] = absl::StrFormat("%016x", r.key.hash);
  j["signature"] = r.signature;
  j["ms"] = r.ms;
  j["samples"] = r.samples;
  j["spread"] = r.spread;
  j["time"] = r.timestamp;
  j["measurements"] = r.measurements;
  if (r.build_ms >= 0) j["build_ms"] = r.build_ms;
  // Replacement of invalid UTF-8 keeps a line writable whatever a signature holds.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

absl::StatusOr<CostRecord> cost_record_from_line(std::string_view line) {
  Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError("not a JSON object");
  auto need = [&](const char* field, bool ok) -> absl::Status {
    if (!j.contains(field)) return absl::InvalidArgumentError(str_cat("no \"", field, "\""));
    if (!ok) return absl::InvalidArgumentError(str_cat("\"", field, "\" has the wrong type"));
    return absl::OkStatus();
  };
  for (const char* f : {"device", "backend", "version", "hash", "signature"})
    if (auto s = need(f, j.contains(f) && j[f].is_string()); !s.ok()) return s;
  for (const char* f : {"ms", "spread"})
    if (auto s = need(f, j.contains(f) && j[f].is_number()); !s.ok()) return s;
  for (const char* f : {"samples", "time"})
    if (auto s = need(f, j.contains(f) && j[f].is_number_integer()); !s.ok()) return s;
  CostRecord r;
  r.key.device = j["device"].get<std::string>();
  r.key.backend = j["backend"].get<std::string>();
  r.key.version = j["version"].get<std::string>();
  const std::string hash = j["hash"].get<std::string>();
  if (hash.size() != 16 || hash.find_first_not_of("0123456789abcdef") != std::string::npos)
    return absl::InvalidArgumentError(str_cat("\"hash\" is not 16 lowercase hex digits: ", hash));
  r.key.hash = std::stoull(hash, nullptr, 16);
  r.signature = j["signature"].get<std::string>();
  r.ms = j["ms"].get<double>();
  r.samples = j["samples"].get<int>();
  r.spread = j["spread"].get<double>();
  r.timestamp = j["time"].get<int64_t>();
  if (j.contains("measurements")) {
    if (!j["measurements"].is_number_integer() || j["measurements"].get<int>() < 1)
      return absl::InvalidArgumentError("\"measurements\" is not an integer >= 1");
    r.measurements = j["measurements"].get<int>();
  }
  if (j.contains("build_ms")) {
    if (!j["build_ms"].is_number() || !std::isfinite(j["build_ms"].get<double>()) ||
        j["build_ms"].get<double>() < 0)
      return absl::InvalidArgumentError("\"build_ms\" is not a number >= 0");
    r.build_ms = j["build_ms"].get<double>();
  }
  if (!std::isfinite(r.ms) || r.ms < 0) return absl::InvalidArgumentError("\"ms\" is not >= 0");
  if (r.samples < 0) return absl::InvalidArgumentError("\"samples\" is negative");
  return r;
}

absl::StatusOr<CostDatabase> CostDatabase::open(std::string path) {
  CostDatabase db(std::move(path));
  if (absl::Status s = db.reload(); !s.ok()) return s;
  return db;
}

absl::Status CostDatabase::reload() {
  auto text = read_locked(path_);
  if (!text.ok()) return text.status();
  records_.clear();
  warnings_.clear();
  lines_read_ = 0;
  for_each_line(*text, [&](size_t line_no, std::string_view line) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    ++lines_read_;
    auto r = cost_record_from_line(line);
    if (!r.ok()) {
      warnings_.push_back(
          str_cat(path_, ":", line_no, ": skipped a corrupt record (", r.status().message(), ")"));
      return;
    }
    keep_newest(records_, *std::move(r));
  });
  return absl::OkStatus();
}

std::optional<CostRecord> CostDatabase::lookup(const CostKey& key) const {
  auto it = records_.find(key);
  if (it == records_.end()) return std::nullopt;
  return it->second;
}

absl::Status CostDatabase::append(const CostRecord& r) {
  if (absl::Status s = append_lines(path_, cost_record_to_line(r) + "\n"); !s.ok()) return s;
  keep_newest(records_, r);
  return absl::OkStatus();
}

absl::StatusOr<PruneStats> prune_cost_database(const std::string& path,
                                               const PruneOptions& options) {
  PruneStats stats;
  Fd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return stats;
    return absl::UnavailableError(str_cat(path, ": cannot open: ", errno_text()));
  }
  if (flock_retry(fd.get(), LOCK_EX) != 0)
    return absl::UnavailableError(str_cat(path, ": cannot lock: ", errno_text()));
  auto text = read_all(fd.get(), path);
  if (!text.ok()) return text.status();
  std::map<CostKey, CostRecord> latest;
  for_each_line(*text, [&](size_t, std::string_view line) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    ++stats.lines_before;
    auto r = cost_record_from_line(line);
    if (!r.ok()) {
      ++stats.corrupt_dropped;
      return;
    }
    keep_newest(latest, *std::move(r));
  });
  std::string out;
  for (const auto& [key, r] : latest) {
    if (!options.keep_device.empty() && key.device != options.keep_device) continue;
    if (options.older_than_s >= 0 && options.now - r.timestamp > options.older_than_s) continue;
    out += cost_record_to_line(r) + "\n";
    ++stats.records_after;
  }
  const std::string tmp = str_cat(path, ".prune.", ::getpid());
  {
    Fd t(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (t.get() < 0) return absl::UnavailableError(str_cat(tmp, ": cannot create: ", errno_text()));
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n = ::write(t.get(), out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::unlink(tmp.c_str());
        return absl::UnavailableError(str_cat(tmp, ": write failed: ", errno_text()));
      }
      done += static_cast<size_t>(n);
    }
    if (::fsync(t.get()) != 0) {
      ::unlink(tmp.c_str());
      return absl::UnavailableError(str_cat(tmp, ": fsync failed: ", errno_text()));
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return absl::UnavailableError(str_cat(path, ": rename failed: ", errno_text()));
  }
  return stats;
}

absl::StatusOr<size_t> merge_cost_database(const std::string& path, const std::string& other) {
  if (!std::filesystem::exists(other)) return absl::NotFoundError(str_cat(other, ": no such file"));
  auto text = read_locked(other);
  if (!text.ok()) return text.status();
  auto db = CostDatabase::open(path);
  if (!db.ok()) return db.status();
  std::string lines;
  size_t added = 0;
  std::map<CostKey, CostRecord> seen = db->records();
  for_each_line(*text, [&](size_t, std::string_view line) {
    auto r = cost_record_from_line(line);
    if (!r.ok()) return;
    auto it = seen.find(r->key);
    if (it != seen.end() && it->second.timestamp >= r->timestamp) return;  // ours is as new
    lines += cost_record_to_line(*r) + "\n";
    keep_newest(seen, *std::move(r));
    ++added;
  });
  if (!lines.empty())
    if (absl::Status s = append_lines(path, lines); !s.ok()) return s;
  return added;
}

}  // namespace collage
