// TargetSpec: host detection through LLVM, and the properties code generation asks about.
#include "collage/target.h"

#include <algorithm>
#include <vector>

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace collage::codegen {

namespace {

bool host_is_amd() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
  // "AuthenticAMD" is returned in ebx, edx, ecx.
  return ebx == 0x68747541 && edx == 0x69746e65 && ecx == 0x444d4163;
#else
  return false;
#endif
}

}  // namespace

TargetSpec TargetSpec::host() {
  TargetSpec t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> features;
  std::string fs;
  if (llvm::sys::getHostCPUFeatures(features)) {
    // Sorted for a deterministic string.
    std::vector<std::string> names;
    for (const auto& f : features) {
      std::string n(1, f.second ? '+' : '-');
      n.append(f.first().data(), f.first().size());
      names.push_back(std::move(n));
    }
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) {
      if (!fs.empty()) fs.push_back(',');
      fs.append(n);
    }
  }
  t.features = fs;
  if ((t.cpu.empty() || t.cpu == "generic") && t.is_x86()) {
    const bool avx512 = t.has_feature("avx512f") && t.has_feature("avx512bw") &&
                        t.has_feature("avx512dq") && t.has_feature("avx512vl");
    if (avx512 && host_is_amd()) {
      t.cpu = "znver4";
    } else if (avx512) {
      t.cpu = "x86-64-v4";
    } else if (t.has_feature("avx2") && t.has_feature("fma")) {
      t.cpu = "x86-64-v3";
    } else {
      t.cpu = "x86-64";
    }
  }
  return t;
}

TargetSpec TargetSpec::aarch64_linux(const std::string& cpu) {
  TargetSpec t;
  t.triple = "aarch64-unknown-linux-gnu";
  t.cpu = cpu;
  t.features = "+neon";
  return t;
}

bool TargetSpec::is_x86() const {
  return llvm::Triple(triple).isX86();
}
bool TargetSpec::is_aarch64() const {
  return llvm::Triple(triple).isAArch64();
}

bool TargetSpec::has_feature(const std::string& name) const {
  const std::string want = "+" + name;
  size_t pos = 0;
  while (pos <= features.size()) {
    size_t end = features.find(',', pos);
    if (end == std::string::npos) end = features.size();
    if (features.compare(pos, end - pos, want) == 0) return true;
    pos = end + 1;
  }
  return false;
}

int TargetSpec::vector_bytes() const {
  if (is_x86()) {
    if (has_feature("avx512f")) return 64;
    if (has_feature("avx2") || has_feature("avx")) return 32;
  }
  return 16;
}

std::string TargetSpec::to_string() const {
  return triple + " " + cpu;
}

}  // namespace collage::codegen
