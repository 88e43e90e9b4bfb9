// The persistent cost database: measured kernel costs as JSON lines, keyed by device, backend,
// backend version and canonical subgraph signature, shared safely by concurrent compiles.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace collage {

struct CostKey {
  std::string device;   // device fingerprint (device_fingerprint())
  std::string backend;  // backend name
  std::string version;  // backend version
  uint64_t hash = 0;    // stable_hash of the canonical signature
  bool operator<(const CostKey& o) const;
  bool operator==(const CostKey& o) const = default;
};

struct CostRecord {
  CostKey key;
  std::string signature;  // the canonical signature itself, for debugging
  double ms = 0;          // median
  int samples = 0;
  double spread = 0;      // (p90 - p10) / median
  int64_t timestamp = 0;  // seconds since the Unix epoch
  int measurements = 1;   // how many times this key has been measured (shaky ones are redone)
  // Wall time building the kernel took when it was measured (ms; -1: not known), so that a later
  // compile that takes the cost from here predicts what building the kernel costs its artifact.
  double build_ms = -1;
};

// One JSON object per line:
//   {"device":..,"backend":..,"version":..,"hash":"<16 hex>","signature":..,"ms":..,
//    "samples":..,"spread":..,"time":..,"measurements":..,"build_ms":..} ("measurements" optional,
//    default 1; "build_ms" optional, -1)
std::string cost_record_to_line(const CostRecord& r);
// Parses one line; InvalidArgument says what is wrong with it.
absl::StatusOr<CostRecord> cost_record_from_line(std::string_view line);

// A cost database file opened by one process. Records are appended with O_APPEND under an
// exclusive flock, each line with a single write(), so concurrent compiles interleave whole
// lines; a torn or corrupt line (a crashed writer, a bad merge) is skipped with a warning. When a
// key appears several times the newest record wins (by timestamp; the later line on a tie).
class CostDatabase {
 public:
  // Reads `path` (a missing file is an empty database; its directory is created on the first
  // append). Errors: the file exists but cannot be read.
  static absl::StatusOr<CostDatabase> open(std::string path);

  const std::string& path() const { return path_; }
  std::optional<CostRecord> lookup(const CostKey& key) const;
  // Appends `r` to the file and to this view. Errors: the file cannot be created or written.
  absl::Status append(const CostRecord& r);
  // Re-reads the file, picking up records other processes appended.
  absl::Status reload();

  size_t size() const { return records_.size(); }
  const std::map<CostKey, CostRecord>& records() const { return records_; }
  // Lines read, and what was wrong with the skipped ones ("line 12: ...").
  size_t lines_read() const { return lines_read_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  explicit CostDatabase(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::map<CostKey, CostRecord> records_;
  size_t lines_read_ = 0;
  std::vector<std::string> warnings_;
};

struct PruneOptions {
  std::string keep_device;    // non-empty: drop records of every other device
  int64_t older_than_s = -1;  // >= 0: drop records older than this many seconds
  int64_t now = 0;            // the current time (seconds since the epoch)
};
struct PruneStats {
  size_t lines_before = 0;
  size_t records_after = 0;
  size_t corrupt_dropped = 0;
};
// Rewrites the file with one record per key (the newest), minus what `options` drops, through a
// temporary file renamed over it while the exclusive lock is held; writers that opened the old
// file notice the rename and append to the new one.
absl::StatusOr<PruneStats> prune_cost_database(const std::string& path,
                                               const PruneOptions& options);

// Appends every valid record of `other` to `path` unless `path` already holds a record of that
// key at least as new; returns how many were appended.
absl::StatusOr<size_t> merge_cost_database(const std::string& path, const std::string& other);

}  // namespace collage
