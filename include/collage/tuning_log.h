// The tuning log: tuned knob values recorded as JSON lines, one measured configuration per line,
// keyed by device fingerprint and canonical operator signature, read back on the next compile.
//
//   {"device":"AMD EPYC 9R14|2 cores|avx2,...","signature":"Conv|x=f32[1,64,56,56]|...",
//    "knobs":{"mr":8,"nr":32},"ms":0.42,"gflops":231.5}
//
// Appending writes whole lines with one write each, so a crash leaves at most one torn line at
// the end; loading skips torn or corrupt lines with a warning instead of failing.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collage/knobs.h"

namespace collage::tune {

struct TuningRecord {
  std::string device;
  std::string signature;
  Knobs knobs;
  double ms = 0;      // median kernel time
  double gflops = 0;  // useful work per second (0 when unknown)
};

// One JSON line (no newline) for a record.
std::string record_to_json(const TuningRecord& r);
// Parses one line; InvalidArgument saying what is wrong for a torn or malformed line.
absl::StatusOr<TuningRecord> record_from_json(const std::string& line);

// The best record (lowest time) per signature for one device.
class TuningLog {
 public:
  explicit TuningLog(std::string device) : device_(std::move(device)) {}

  // Reads `path` (a missing file is an empty log). Lines of other devices are ignored; lines that
  // do not parse are skipped and described in `warnings` (path, line number, reason). Errors:
  // NotFound/PermissionDenied style failures to read an existing file.
  static absl::StatusOr<TuningLog> load(const std::string& path, std::string device,
                                        std::vector<std::string>* warnings);

  // Keeps `r` when its device matches and it beats the record held for its signature.
  void add(const TuningRecord& r);
  // The tuned knobs of `signature`, or null when the log has none.
  const Knobs* find(const std::string& signature) const;
  const TuningRecord* best(const std::string& signature) const;
  const std::string& device() const { return device_; }
  size_t size() const { return best_.size(); }

 private:
  std::string device_;
  std::map<std::string, TuningRecord> best_;
};

// Appends one line for `r` to `path` (created when missing). Errors name the file.
absl::Status append_record(const std::string& path, const TuningRecord& r);

}  // namespace collage::tune
