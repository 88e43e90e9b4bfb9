// Randomly composed schedules (splits, fuses, reorders, loop kinds, inline / compute_at /
// cache_write) of small computes with odd sizes: every schedule either lowers and computes the
// reference result, or is refused with an InvalidArgument error; nothing crashes.
#include <cmath>
#include <random>

#include "jit_test_util.h"

using namespace collage;
namespace te = collage::te;

namespace {

// Applies `steps` random loop transformations (split, fuse, reorder) to stage `t`, then perhaps
// vectorizes its innermost data-parallel loop and unrolls another one.
void randomize_stage(te::Schedule& s, const te::Tensor& t, std::mt19937& rng, int steps) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  for (int step = 0; step < steps; ++step) {
    std::vector<te::IterVar> leaf = s[t].leaf_axes();
    const size_t p = pick(leaf.size());
    switch (pick(4)) {
      case 0:
      case 1: {
        static constexpr int64_t kFactors[] = {1, 2, 3, 4, 5, 8, 16};
        s[t].split(leaf[p], kFactors[pick(7)]);
        break;
      }
      case 2:
        if (p + 1 < leaf.size() && leaf[p].kind() == leaf[p + 1].kind())
          s[t].fuse(leaf[p], leaf[p + 1]);
        break;
      default: {
        std::shuffle(leaf.begin(), leaf.end(), rng);
        s[t].reorder(leaf);
        break;
      }
    }
  }
  std::vector<te::IterVar> leaf = s[t].leaf_axes();
  const te::IterVar& inner = leaf.back();
  if (pick(2) && inner.kind() == te::IterKind::data_par) s[t].vectorize(inner);
  if (pick(2) && leaf.size() > 1) s[t].unroll(leaf[pick(leaf.size() - 1)]);
}

}  // namespace

TEST_CASE("random schedules lower to correct kernels or are refused", "[codegen][random]") {
  std::mt19937 rng(20240611);
  int compiled = 0, refused = 0;
  for (int trial = 0; trial < 150; ++trial) {
    static constexpr int64_t kSizes[] = {1, 3, 7, 8, 13};
    const int64_t n = kSizes[rng() % 5], m = kSizes[rng() % 5], r = kSizes[rng() % 5];
    const bool reduction = rng() % 2;
    te::Tensor A = te::placeholder({n, r}, DType::f32, "A");
    te::Tensor P = te::compute(
        {n, r}, [&](te::Var i, te::Var j) { return A(i, j) * 2.0f + 1.0f; }, "P");
    te::IterVar k = te::reduce_axis({0, r}, "k");
    te::Tensor C = te::compute(
        {n, m},
        [&](te::Var i, te::Var j) {
          return reduction ? te::sum(P(i, k) * te::cast(DType::f32, j + 1), {k})
                           : P(i, te::floormod(j, r)) - te::cast(DType::f32, j);
        },
        "C");

    te::Schedule s = te::create_schedule({C});
    te::Tensor CC;
    if (reduction && rng() % 2) {
      CC = s.cache_write(C);
      randomize_stage(s, CC, rng, 3);
    }
    randomize_stage(s, C, rng, 4);
    switch (rng() % 3) {
      case 0:
        s[P].compute_inline();
        break;
      case 1: {
        te::Tensor consumer = CC.defined() ? CC : C;
        std::vector<te::IterVar> leaf = s[consumer].leaf_axes();
        s[P].compute_at(s[consumer], leaf[rng() % leaf.size()]);
        break;
      }
      default:
        randomize_stage(s, P, rng, 2);
        break;
    }
    if (CC.defined()) {
      std::vector<te::IterVar> leaf = s[C].leaf_axes();
      s[CC].compute_at(s[C], leaf[rng() % leaf.size()]);
    }
    const te::IterVar outer = s[C].leaf_axes()[0];
    if (rng() % 3 == 0 && outer.kind() == te::IterKind::data_par && s.status().ok())
      s[C].parallel(outer);

    absl::StatusOr<te::PrimFunc> f = te::lower(s, {A, C}, "random");
    if (!f.ok()) {
      INFO(f.status().message());
      REQUIRE(f.status().code() == absl::StatusCode::kInvalidArgument);
      ++refused;
      continue;
    }
    absl::StatusOr<std::unique_ptr<codegen::JitModule>> mod = codegen::JitModule::compile({*f});
    INFO(te::to_string(*f));
    if (!mod.ok()) {
      INFO(mod.status().message());
      REQUIRE(mod.status().code() == absl::StatusCode::kInvalidArgument);
      ++refused;
      continue;
    }
    ++compiled;
    std::vector<float> a = testing::random_floats(n * r, trial), c(n * m, NAN);
    std::vector<void*> args = {a.data(), c.data()};
    codegen::KernelFn fn = *(*mod)->lookup("random");
    for (int t = 0; t < 3; ++t) fn(args.data(), t, 3);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double ref = 0;
        if (reduction) {
          for (int64_t kk = 0; kk < r; ++kk) ref += (a[i * r + kk] * 2.0 + 1.0) * (j + 1);
        } else {
          ref = (a[i * r + j % r] * 2.0 + 1.0) - j;
        }
        INFO("trial " << trial << " element " << i << ", " << j);
        REQUIRE(std::fabs(c[i * m + j] - ref) <= 1e-4 * (1 + std::fabs(ref)));
      }
    }
  }
  // Most random schedules are legal.
  CHECK(compiled > 3 * refused);
}
