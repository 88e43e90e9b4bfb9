// TargetSpec: host detection through LLVM, and the properties code generation asks about.
#include "collage/target.h"

#include <algorithm>
#include <set>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/TargetParser/X86TargetParser.h"

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

absl::StatusOr<TargetSpec> TargetSpec::named(const std::string& cpu) {
  if (cpu.empty() || cpu == "host") return host();
  const std::string name = cpu == "avx2" ? "x86-64-v3" : cpu == "avx512" ? "x86-64-v4" : cpu;
  TargetSpec t;
  t.triple = llvm::sys::getProcessTriple();
  if (!t.is_x86())
    return absl::InvalidArgumentError("target '" + cpu + "': the host (" + t.triple +
                                      ") is no x86-64 machine; only the host's CPU can be named");
  if (llvm::X86::parseArchX86(name, /*Only64Bit=*/true) == llvm::X86::CK_None)
    return absl::InvalidArgumentError(
        "target '" + cpu +
        "' is no x86-64 CPU LLVM knows (try host, avx2 = x86-64-v3, avx512 = x86-64-v4, "
        "x86-64-v2, or a CPU name such as haswell, znver3, skylake-avx512)");
  t.cpu = name;
  // The CPU's features and everything they imply (getFeaturesForCPU lists avx512bw, not the
  // avx512f it needs).
  llvm::SmallVector<llvm::StringRef, 64> listed;
  llvm::X86::getFeaturesForCPU(name, listed);
  llvm::StringMap<bool> implied;
  for (llvm::StringRef f : listed) {
    implied[f] = true;
    llvm::X86::updateImpliedFeatures(f, true, implied);
  }
  std::set<std::string> names;
  for (const auto& f : implied)
    if (f.second) names.insert("+" + f.first().str());
  // The vector extensions host detection knows and the CPU lacks are named disabled, so that
  // runs_on can tell them from features detection does not report (x87, 64bit), which code for
  // the CPU needs and must not be disabled.
  llvm::StringMap<bool> known;
  llvm::sys::getHostCPUFeatures(known);
  for (const auto& f : known) {
    const llvm::StringRef n = f.first();
    const bool vector_isa = n.startswith("avx") || n.startswith("amx") || n.startswith("fma") ||
                            n == "f16c" || n == "xop" || n == "sse4a" || n == "vaes" ||
                            n == "vpclmulqdq" || n == "gfni";
    if (vector_isa && !implied.lookup(n)) names.insert("-" + n.str());
  }
  t.features = absl::StrJoin(names, ",");
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

int TargetSpec::vector_registers() const {
  if (is_aarch64()) return 32;
  return is_x86() && has_feature("avx512f") ? 32 : 16;
}

absl::Status TargetSpec::runs_on(const TargetSpec& machine) const {
  if (llvm::Triple(triple).getArch() != llvm::Triple(machine.triple).getArch())
    return absl::FailedPreconditionError(
        "target " + to_string() + " is for another architecture than " + machine.to_string());
  // A feature is missing when the machine names it disabled; features it does not name at all
  // (x87, cx8: host detection does not report the baseline) are taken as present.
  std::set<std::string> disabled;
  for (const std::string& f : std::vector<std::string>(absl::StrSplit(machine.features, ',')))
    if (!f.empty() && f[0] == '-') disabled.insert(f.substr(1));
  std::vector<std::string> missing;
  for (const std::string& f : std::vector<std::string>(absl::StrSplit(features, ',')))
    if (!f.empty() && f[0] == '+' && disabled.count(f.substr(1))) missing.push_back(f.substr(1));
  if (missing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      "target " + to_string() + " needs " + absl::StrJoin(missing, ", ") + ", which " +
      machine.to_string() + " lacks: its code cannot run (or be measured) here");
}

std::string TargetSpec::to_string() const {
  return triple + " " + cpu;
}

}  // namespace collage::codegen
