// The openvino backend's region cache on disk: the kernel record of a compiled region (its IR,
// weights and OpenVINO's exported compiled model) in one file, named by a hash of everything the
// record depends on, so that a later compile that builds the same region into an artifact reads
// its record instead of compiling it with OpenVINO again (and writes the same bytes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "collage/graph.h"
#include "collage/kernel.h"

namespace collage::openvino_backend {

// The key of `group` compiled for `threads` threads by OpenVINO `library` with backend
// `version`: its canonical signature (operators, attributes, types), the contents of its
// constants, which the signature leaves out, and the three others.
uint64_t region_key(const Graph& group, int32_t threads, std::string_view library,
                    std::string_view version);

// The record cached under `key` in `dir`, its constants mapped from the file; nullopt when there
// is none, or when it cannot be read or is not a whole record (a later write replaces it).
std::optional<KernelRecord> read_cached_region(const std::string& dir, uint64_t key);

// Stores `record` under `key` in `dir` (created when missing), atomically: a reader sees the
// whole file or none. Errors name the file.
absl::Status write_cached_region(const std::string& dir, uint64_t key, const KernelRecord& record);

}  // namespace collage::openvino_backend
