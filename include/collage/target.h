// TargetSpec: the machine generated code is compiled for (triple, CPU, features), with the host's
// description detected through LLVM.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace collage::codegen {

struct TargetSpec {
  std::string triple;    // "x86_64-pc-linux-gnu", "aarch64-unknown-linux-gnu"
  std::string cpu;       // "znver4", "x86-64-v3", "generic", "cortex-a72"
  std::string features;  // LLVM feature string: "+avx512f,+fma,-amx-tile,..."

  // The machine this process runs on. When LLVM does not know the CPU model by name it picks the
  // closest one it knows from the features (an AMD CPU with AVX-512 is treated as znver4).
  static TargetSpec host();
  // 64-bit Arm Linux with NEON.
  static TargetSpec aarch64_linux(const std::string& cpu = "generic");
  // An x86-64 CPU by name, with the features LLVM implies for it (not the host's): "x86-64-v3"
  // (alias "avx2": AVX2 and FMA, 16 vector registers), "x86-64-v4" (alias "avx512": AVX-512
  // F/BW/DQ/VL/CD, 32 registers), "x86-64-v2", or any CPU LLVM knows ("haswell", "znver3",
  // "skylake-avx512"); "host" or "" is host(). The triple is the host's (code for it must run
  // here to be measured: see runs_on). InvalidArgument naming the CPU when LLVM does not know it
  // or the host is no x86-64 machine.
  static absl::StatusOr<TargetSpec> named(const std::string& cpu);

  bool is_x86() const;
  bool is_aarch64() const;
  bool has_feature(const std::string& name) const;  // name without the sign, e.g. "avx512f"
  // Bytes in the widest SIMD register: 64 with AVX-512, 32 with AVX2, 16 otherwise.
  int vector_bytes() const;
  // Architectural SIMD registers: 32 with AVX-512 (zmm0-31) and on AArch64 (v0-31), 16 otherwise
  // on x86-64 (ymm0-15 / xmm0-15).
  int vector_registers() const;
  // OK when code for this target runs on `machine` (same triple, every feature this target
  // enables is one `machine` has); else FailedPrecondition naming the missing features.
  absl::Status runs_on(const TargetSpec& machine) const;
  // "x86_64-pc-linux-gnu znver4".
  std::string to_string() const;
};

}  // namespace collage::codegen
