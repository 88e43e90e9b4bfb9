// A JIT module's code and its constants stay within reach of each other however fragmented the
// process's address space is. The small code model reads constants with 32-bit displacements
// from the code; LLVM 16's default linker on x86-64 ELF (RuntimeDyld) mapped them separately,
// and a compile measuring hundreds of kernels beside OpenVINO and oneDNN got its constants 2.4 GB
// from the code and crashed reading them. Here the address space is arranged so that two
// separate one-page maps land 8 GiB apart: a reserved range with a one-page hole at its top and
// one at its bottom, every free range above it filled.
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "jit_test_util.h"

using namespace collage;
using collage::testing::random_floats;
namespace te = collage::te;

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kReserved = size_t{8} << 30;

// The free ranges between `from` and the highest mapping below the stack, from /proc/self/maps.
std::vector<std::pair<uintptr_t, uintptr_t>> gaps_above(uintptr_t from) {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::pair<uintptr_t, uintptr_t>> mapped, gaps;
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("[stack]") != std::string::npos) break;  // the stack and what lies above it
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2) mapped.emplace_back(lo, hi);
  }
  for (size_t k = 1; k < mapped.size(); ++k)
    if (mapped[k - 1].second >= from && mapped[k].first > mapped[k - 1].second)
      gaps.emplace_back(mapped[k - 1].second, mapped[k].first);
  return gaps;
}

// The fragmented address space, undone when it goes out of scope: every free range above the
// reserved one filled, then a one-page hole at the reserved range's top and one at its bottom.
class FragmentedAddressSpace {
 public:
  FragmentedAddressSpace() {
    void* r = mmap(nullptr, kReserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    REQUIRE(r != MAP_FAILED);
    reserved_ = static_cast<char*>(r);
    for (auto [lo, hi] : gaps_above(reinterpret_cast<uintptr_t>(reserved_) + kReserved)) {
      void* p = mmap(reinterpret_cast<void*>(lo), hi - lo, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
      if (p == MAP_FAILED) continue;
      if (p != reinterpret_cast<void*>(lo)) {  // a kernel that ignores MAP_FIXED_NOREPLACE
        munmap(p, hi - lo);
        continue;
      }
      fillers_.emplace_back(p, hi - lo);
    }
    munmap(reserved_ + kReserved - 2 * kPage, kPage);
    munmap(reserved_ + kPage, kPage);
  }
  ~FragmentedAddressSpace() {
    for (auto [p, size] : fillers_) munmap(p, size);
    munmap(reserved_, kReserved);
  }

 private:
  char* reserved_ = nullptr;
  std::vector<std::pair<void*, size_t>> fillers_;
};

}  // namespace

TEST_CASE("JIT: code and constants in reach in a fragmented address space", "[codegen][jit]") {
  // y = x * 2.5 + 1.25, vectorized: the splat constants are loaded from the constant pool.
  te::Tensor X = te::placeholder({64}, DType::f32, "X");
  te::Tensor Y = te::compute(
      {64}, [&](te::Var i) { return X(i) * 2.5f + 1.25f; }, "Y");
  te::Schedule s = te::create_schedule({Y});
  auto [o, i] = s[Y].split(Y.axis(0), 16);
  s[Y].vectorize(i);
  absl::StatusOr<te::PrimFunc> f = te::lower(s, {X, Y}, "affine");
  REQUIRE(f.ok());

  std::vector<std::unique_ptr<codegen::JitModule>> modules;
  for (int round = 0; round < 3; ++round) {
    FragmentedAddressSpace fragmented;
    absl::StatusOr<std::unique_ptr<codegen::JitModule>> m = codegen::JitModule::compile({*f});
    INFO(m.status().ToString());
    REQUIRE(m.ok());
    modules.push_back(std::move(*m));
  }
  const std::vector<float> x = random_floats(64, 7);
  for (const auto& m : modules) {
    absl::StatusOr<codegen::KernelFn> fn = m->lookup("affine");
    REQUIRE(fn.ok());
    std::vector<float> y(64);
    std::vector<void*> args = {const_cast<float*>(x.data()), y.data()};
    (*fn)(args.data(), 0, 1);
    for (size_t k = 0; k < x.size(); ++k) CHECK(y[k] == Approx(x[k] * 2.5f + 1.25f).margin(1e-6));
  }
}
