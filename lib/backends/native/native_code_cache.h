// The native backend's compiled-code cache on disk: one relocatable object per kernel module,
// named by a hash of everything its code depends on (the loop IR of its functions, the target,
// the LLVM version, the backend version), so that a later compile of the same model loads its
// kernels instead of running LLVM again, and writes the same bytes into artifacts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "collage/target.h"
#include "collage/loop_ir.h"

namespace collage::native {

// The cache key of the module compiling `funcs` for `target` with backend `version`.
uint64_t code_key(const std::vector<te::PrimFunc>& funcs, const codegen::TargetSpec& target,
                  std::string_view version);

// The object cached under `key` in `dir`; nullopt when there is none (or it cannot be read).
std::optional<std::string> read_cached_code(const std::string& dir, uint64_t key);

// Stores `object` under `key` in `dir` (created when missing), atomically: a reader sees the
// whole file or none. Errors name the file.
absl::Status write_cached_code(const std::string& dir, uint64_t key, const std::string& object);

}  // namespace collage::native
