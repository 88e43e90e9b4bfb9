// TargetSpec: the machine generated code is compiled for (triple, CPU, features), with the host's
// description detected through LLVM.
#pragma once

#include <string>

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

  bool is_x86() const;
  bool is_aarch64() const;
  bool has_feature(const std::string& name) const;  // name without the sign, e.g. "avx512f"
  // Bytes in the widest SIMD register: 64 with AVX-512, 32 with AVX2, 16 otherwise.
  int vector_bytes() const;
  // "x86_64-pc-linux-gnu znver4".
  std::string to_string() const;
};

}  // namespace collage::codegen
