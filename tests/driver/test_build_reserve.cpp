// The budget's part kept for building the artifact grows with what recording and writing the
// model's constants take (GPT-2: 620 MiB, 8.2 s of a 60 s budget, where kBuildShare keeps 6).
#include <catch2/catch.hpp>

#include "driver/build_reserve.h"

namespace collage {
namespace {

class NamedBackend : public Backend {
 public:
  explicit NamedBackend(std::string name) : Backend(std::move(name), DeviceKind::cpu, "1") {}
  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph&, const BuildOptions&) const override {
    return absl::UnimplementedError("never built");
  }
};

BackendRegistry registry(std::initializer_list<const char*> names) {
  BackendRegistry r;
  for (const char* n : names) REQUIRE(r.add(std::make_unique<NamedBackend>(n)).ok());
  return r;
}

constexpr double kMiB = 1 << 20;

TEST_CASE("build reserve: the share, or the record and write of large constants", "[driver]") {
  const BackendRegistry with_ov = registry({"native", "openvino"});
  PlacementOptions o;
  o.time_budget_s = 60;
  // Small models keep the share.
  CHECK(build_reserve_s(with_ov, o, 20 * kMiB) == Approx(kBuildShare * 60));
  // GPT-2's constants: written at kWriteBytesPerSecond, recorded at kRegionRecordBytesPerSecond.
  const double gpt2 = 620 * kMiB;
  const double record_and_write = gpt2 / kWriteBytesPerSecond + gpt2 / kRegionRecordBytesPerSecond;
  CHECK(record_and_write > kBuildShare * 60);
  CHECK(build_reserve_s(with_ov, o, gpt2) == Approx(record_and_write));
  // Where openvino takes no part, only the write counts (below the share here).
  CHECK(build_reserve_s(registry({"native", "dnnl"}), o, gpt2) == Approx(kBuildShare * 60));
  o.backends = {"native", "dnnl"};
  CHECK(build_reserve_s(with_ov, o, gpt2) == Approx(kBuildShare * 60));
  o.backends.clear();
  o.strategy = "single:native";
  CHECK(build_reserve_s(with_ov, o, gpt2) == Approx(kBuildShare * 60));
  o.strategy = "single:openvino";
  CHECK(build_reserve_s(with_ov, o, gpt2) == Approx(record_and_write));
  // Never more than half the budget.
  o.time_budget_s = 10;
  CHECK(build_reserve_s(with_ov, o, gpt2) == Approx(5));
}

}  // namespace
}  // namespace collage
