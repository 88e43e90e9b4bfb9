// JIT-compiled kernels against plain C++ loops: elementwise with split tails for every factor and
// vector width, parallel task splitting, reductions, compute_at, matmul with packing and
// cache_write, a convolution with an inlined padding stage.
#include <cmath>

#include "jit_test_util.h"

using namespace collage;
using collage::testing::compile_kernel;
using collage::testing::random_floats;
using collage::testing::run_tasks;
namespace te = collage::te;

TEST_CASE("elementwise kernels with split tails match for every factor and vector width",
          "[codegen][jit]") {
  const int64_t rows = 7, cols = 13;
  te::Tensor A = te::placeholder({rows, cols}, DType::f32, "A");
  te::Tensor B = te::placeholder({rows, cols}, DType::f32, "B");
  te::Tensor C = te::compute(
      {rows, cols}, [&](te::Var i, te::Var j) { return A(i, j) * 2.0f + B(i, j); }, "C");
  std::vector<float> a = random_floats(rows * cols, 1), b = random_floats(rows * cols, 2);
  for (int64_t factor : {1, 2, 3, 4, 5, 8, 13, 16, 17}) {
    for (bool vectorize : {false, true}) {
      te::Schedule s = te::create_schedule({C});
      auto [io, ii] = s[C].split(C.axis(0), 3);
      auto [jo, ji] = s[C].split(C.axis(1), factor);
      s[C].reorder({io, jo, ii, ji});
      if (vectorize) s[C].vectorize(ji);
      testing::Compiled k = compile_kernel(s, {A, B, C});
      std::vector<float> c(rows * cols, -7.f);
      run_tasks(k, {a.data(), b.data(), c.data()});
      INFO("factor " << factor << " vectorized " << vectorize);
      for (int64_t i = 0; i < rows * cols; ++i) REQUIRE(c[i] == a[i] * 2.0f + b[i]);
    }
  }
}

TEST_CASE("vectorizing an outer loop and a fused loop", "[codegen][jit]") {
  te::Tensor A = te::placeholder({5, 6}, DType::f32, "A");
  te::Tensor C = te::compute(
      {5, 6}, [&](te::Var i, te::Var j) { return A(i, j) - 1.0f; }, "C");
  std::vector<float> a = random_floats(30, 3);
  SECTION("outer") {
    te::Schedule s = te::create_schedule({C});
    s[C].vectorize(C.axis(0));
    testing::Compiled k = compile_kernel(s, {A, C});
    std::vector<float> c(30);
    run_tasks(k, {a.data(), c.data()});
    for (int i = 0; i < 30; ++i) REQUIRE(c[i] == a[i] - 1.0f);
  }
  SECTION("fused and split with a tail") {
    te::Schedule s = te::create_schedule({C});
    te::IterVar f = s[C].fuse(C.axis(0), C.axis(1));
    auto [fo, fi] = s[C].split(f, 8);
    s[C].vectorize(fi);
    testing::Compiled k = compile_kernel(s, {A, C});
    std::vector<float> c(30);
    run_tasks(k, {a.data(), c.data()});
    for (int i = 0; i < 30; ++i) REQUIRE(c[i] == a[i] - 1.0f);
  }
}

TEST_CASE("parallel kernels give identical results for 1 to 7 tasks", "[codegen][jit]") {
  const int64_t n = 37, m = 9;
  te::Tensor A = te::placeholder({n, m}, DType::f32, "A");
  te::IterVar k = te::reduce_axis({0, m}, "k");
  te::Tensor S = te::compute(
      {n}, [&](te::Var i) { return te::sum(A(i, k) * A(i, k), {k}); }, "S");
  te::Schedule s = te::create_schedule({S});
  auto [o, i] = s[S].split(S.axis(0), 4);
  s[S].parallel(o);
  testing::Compiled kern = compile_kernel(s, {A, S});
  std::vector<float> a = random_floats(n * m, 4);
  std::vector<float> first;
  for (int tasks = 1; tasks <= 7; ++tasks) {
    std::vector<float> out(n, std::nanf(""));
    run_tasks(kern, {a.data(), out.data()}, tasks);
    if (tasks == 1) {
      first = out;
      for (int64_t r = 0; r < n; ++r) {
        double ref = 0;
        for (int64_t c = 0; c < m; ++c) ref += double(a[r * m + c]) * a[r * m + c];
        REQUIRE(std::fabs(out[r] - ref) <= 1e-5 * std::fabs(ref) + 1e-6);
      }
    }
    INFO("tasks " << tasks);
    REQUIRE(out == first);
  }
  // On a thread pool as well.
  ThreadPool pool(3);
  std::vector<float> out(n);
  std::vector<void*> args = {a.data(), out.data()};
  codegen::run_kernel(kern.fn, args.data(), 5, &pool);
  CHECK(out == first);
}

TEST_CASE("a kernel without a parallel loop works only in task 0", "[codegen][jit]") {
  te::Tensor A = te::placeholder({4}, DType::f32, "A");
  te::Tensor B = te::compute(
      {4}, [&](te::Var i) { return A(i) + 1.0f; }, "B");
  te::Schedule s = te::create_schedule({B});
  testing::Compiled k = compile_kernel(s, {A, B});
  std::vector<float> a = {1, 2, 3, 4}, b(4, 0.f);
  std::vector<void*> args = {a.data(), b.data()};
  k.fn(args.data(), 1, 2);
  CHECK(b == std::vector<float>(4, 0.f));
  k.fn(args.data(), 0, 2);
  CHECK(b == std::vector<float>{2, 3, 4, 5});
}

TEST_CASE("reductions: sum, max and min with split reduction axes", "[codegen][jit]") {
  const int64_t rows = 5, cols = 11;
  te::Tensor A = te::placeholder({rows, cols}, DType::f32, "A");
  te::IterVar k1 = te::reduce_axis({0, cols}, "k");
  te::IterVar k2 = te::reduce_axis({0, cols}, "k");
  te::IterVar k3 = te::reduce_axis({0, cols}, "k");
  te::IterVar k4 = te::reduce_axis({0, rows}, "r");
  te::Tensor Sum = te::compute(
      {rows}, [&](te::Var i) { return te::sum(A(i, k1), {k1}); }, "Sum");
  te::Tensor Max = te::compute(
      {rows}, [&](te::Var i) { return te::max(A(i, k2), {k2}); }, "Max");
  te::Tensor Min = te::compute(
      {rows}, [&](te::Var i) { return te::min(A(i, k3), {k3}, -0.5f); }, "Min");
  te::Tensor Col = te::compute(
      {cols}, [&](te::Var j) { return te::sum(A(k4, j), {k4}); }, "Col");
  te::Schedule s = te::create_schedule({Sum, Max, Min, Col});
  s[Sum].split(k1, 4);
  s[Max].split(k2, 3);
  auto [jo, ji] = s[Col].split(Col.axis(0), 8);
  s[Col].reorder({jo, k4, ji}).vectorize(ji);
  testing::Compiled k = compile_kernel(s, {A, Sum, Max, Min, Col});
  std::vector<float> a = random_floats(rows * cols, 5);
  std::vector<float> sum(rows), mx(rows), mn(rows), col(cols);
  run_tasks(k, {a.data(), sum.data(), mx.data(), mn.data(), col.data()});
  for (int64_t i = 0; i < rows; ++i) {
    float rs = 0, rmax = -INFINITY, rmin = -0.5f;
    for (int64_t j = 0; j < cols; ++j) {
      rs += a[i * cols + j];
      rmax = std::max(rmax, a[i * cols + j]);
      rmin = std::min(rmin, a[i * cols + j]);
    }
    CHECK(sum[i] == rs);
    CHECK(mx[i] == rmax);
    CHECK(mn[i] == rmin);
  }
  for (int64_t j = 0; j < cols; ++j) {
    float cs = 0;
    for (int64_t i = 0; i < rows; ++i) cs += a[i * cols + j];
    CHECK(col[j] == cs);
  }
}

TEST_CASE("compute_at with a halo and compute_inline run correctly", "[codegen][jit]") {
  const int64_t n = 23;
  te::Tensor A = te::placeholder({n}, DType::f32, "A");
  te::Tensor B = te::compute(
      {n + 2}, [&](te::Var i) { return A(te::minimum(i, n - 1)) * 3.0f; }, "B");
  te::Tensor C = te::compute(
      {n}, [&](te::Var i) { return B(i) + B(i + 1) - B(i + 2); }, "C");
  std::vector<float> a = random_floats(n, 6);
  std::vector<float> ref(n);
  auto bval = [&](int64_t i) { return a[std::min<int64_t>(i, n - 1)] * 3.0f; };
  for (int64_t i = 0; i < n; ++i) ref[i] = bval(i) + bval(i + 1) - bval(i + 2);
  for (int variant = 0; variant < 3; ++variant) {
    te::Schedule s = te::create_schedule({C});
    auto [o, i] = s[C].split(C.axis(0), 4);
    if (variant == 0) s[B].compute_at(s[C], o);
    if (variant == 1) s[B].compute_inline();
    if (variant == 2) s[C].vectorize(i);
    testing::Compiled k = compile_kernel(s, {A, C});
    std::vector<float> c(n);
    run_tasks(k, {a.data(), c.data()});
    INFO("variant " << variant);
    REQUIRE(c == ref);
  }
}

namespace {

// The TVM-style CPU matmul: B packed into panels of nr columns, nr-wide register tile of mr rows
// accumulated in a local buffer (cache_write) computed at the tile, k innermost-but-one, the
// micro-kernel unrolled and vectorized, parallel over row blocks. With pack_a, each block of mr
// rows of A is repacked too (Ap[io, k, ii] = A[io*mr + ii, k]), computed at C's row loop for the
// C.local tiles that read it.
struct PackedMatmul {
  te::Tensor A, B, Bp, Ap, C;
  te::Schedule sched;
  PackedMatmul(int64_t M, int64_t N, int64_t K, int64_t mr, int64_t nr, int64_t vec, bool pack_a)
      : A(te::placeholder({M, K}, DType::f32, "A")),
        B(te::placeholder({K, N}, DType::f32, "B")),
        Bp(te::compute(
            {(N + nr - 1) / nr, K, nr},
            [&](te::Var jo, te::Var k, te::Var jl) {
              te::Expr j = jo * nr + jl;
              return te::select(j < N, B(k, te::minimum(j, N - 1)), 0.0f);
            },
            "Bp")),
        Ap(te::compute(
            {(M + mr - 1) / mr, K, mr},
            [&](te::Var io, te::Var k, te::Var ii) {
              te::Expr i = io * mr + ii;
              return te::select(i < M, A(te::minimum(i, M - 1), k), 0.0f);
            },
            "Ap")),
        C(),
        sched({}) {
    te::IterVar k = te::reduce_axis({0, K}, "k");
    C = te::compute(
        {M, N},
        [&](te::Var i, te::Var j) {
          te::Expr a = pack_a ? Ap(te::floordiv(i, mr), k, te::floormod(i, mr)) : A(i, k);
          return te::sum(a * Bp(te::floordiv(j, nr), k, te::floormod(j, nr)), {k});
        },
        "C");
    sched = te::create_schedule({C});
    te::Tensor CC = sched.cache_write(C);
    sched[Bp].pack();
    auto [bo, bi] = sched[Bp].split(Bp.axis(2), vec);
    sched[Bp].vectorize(bi);
    auto [io, jo, ii, ji] = sched[C].tile(C.axis(0), C.axis(1), mr, nr);
    sched[C].parallel(io);
    auto [jio, jii] = sched[C].split(ji, vec);
    sched[C].vectorize(jii);
    sched[CC].compute_at(sched[C], jo);
    auto [cjo, cji] = sched[CC].split(CC.axis(1), vec);
    sched[CC].reorder({sched[CC].reduce_axis(0), CC.axis(0), cjo, cji});
    sched[CC].unroll(CC.axis(0)).unroll(cjo).vectorize(cji);
    if (pack_a) {
      sched[Ap].compute_at(sched[C], io);
      sched[Ap].unroll(Ap.axis(2));
    }
  }
};

}  // namespace

TEST_CASE("packed, register-tiled matmul matches a plain loop at odd sizes", "[codegen][jit]") {
  struct Size {
    int64_t M, N, K, mr, nr, vec;
    bool pack_a;
  };
  for (Size sz : {Size{13, 37, 19, 4, 16, 8, false}, Size{8, 32, 16, 4, 32, 16, false},
                  Size{1, 5, 3, 2, 4, 4, false}, Size{30, 50, 70, 6, 32, 16, false},
                  Size{13, 37, 19, 4, 16, 8, true}, Size{30, 50, 70, 6, 32, 16, true}}) {
    PackedMatmul mm(sz.M, sz.N, sz.K, sz.mr, sz.nr, sz.vec, sz.pack_a);
    absl::StatusOr<te::PrimFunc> main = te::lower(mm.sched, {mm.A, mm.Bp, mm.C}, "mm");
    absl::StatusOr<te::PrimFunc> pack = te::lower_pack(mm.sched, mm.Bp, {mm.B, mm.Bp}, "pack");
    REQUIRE(main.ok());
    REQUIRE(pack.ok());
    auto module = codegen::JitModule::compile({*main, *pack});
    REQUIRE(module.ok());
    std::vector<float> a = random_floats(sz.M * sz.K, 7), b = random_floats(sz.K * sz.N, 8);
    std::vector<float> bp(((sz.N + sz.nr - 1) / sz.nr) * sz.K * sz.nr), c(sz.M * sz.N, NAN);
    std::vector<void*> pargs = {b.data(), bp.data()}, args = {a.data(), bp.data(), c.data()};
    (*(*module)->lookup("pack"))(pargs.data(), 0, 1);
    ThreadPool pool(2);
    codegen::run_kernel(*(*module)->lookup("mm"), args.data(), 3, &pool);
    INFO("M " << sz.M << " N " << sz.N << " K " << sz.K << " pack_a " << sz.pack_a);
    for (int64_t i = 0; i < sz.M; ++i) {
      for (int64_t j = 0; j < sz.N; ++j) {
        double ref = 0;
        for (int64_t k = 0; k < sz.K; ++k) ref += double(a[i * sz.K + k]) * b[k * sz.N + j];
        REQUIRE(std::fabs(c[i * sz.N + j] - ref) < 1e-4);
      }
    }
  }
}

TEST_CASE("a convolution with an inlined zero-padding stage", "[codegen][jit]") {
  const int64_t ci = 3, co = 4, h = 9, w = 11, kh = 3, kw = 3;
  te::Tensor X = te::placeholder({ci, h, w}, DType::f32, "X");
  te::Tensor W = te::placeholder({co, ci, kh, kw}, DType::f32, "W");
  te::Tensor Xp = te::compute(
      {ci, h + 2, w + 2},
      [&](te::Var c, te::Var y, te::Var x) {
        te::Expr inside = y >= 1 && y <= h && x >= 1 && x <= w;
        return te::select(inside,
                          X(c, te::maximum(te::minimum(y - 1, h - 1), 0),
                            te::maximum(te::minimum(x - 1, w - 1), 0)),
                          0.0f);
      },
      "Xp");
  te::IterVar rc = te::reduce_axis({0, ci}, "rc"), ry = te::reduce_axis({0, kh}, "ry"),
              rx = te::reduce_axis({0, kw}, "rx");
  te::Tensor Y = te::compute(
      {co, h, w},
      [&](te::Var o, te::Var y, te::Var x) {
        return te::sum(Xp(rc, y + ry, x + rx) * W(o, rc, ry, rx), {rc, ry, rx});
      },
      "Y");
  te::Tensor R = te::compute(
      {co, h, w}, [&](te::Var o, te::Var y, te::Var x) { return te::maximum(Y(o, y, x), 0.0f); },
      "R");
  te::Schedule s = te::create_schedule({R});
  s[Xp].compute_inline();
  auto [xo, xi] = s[R].split(R.axis(2), 8);
  s[R].vectorize(xi).parallel(R.axis(0));
  s[Y].compute_at(s[R], R.axis(1));
  auto [yxo, yxi] = s[Y].split(Y.axis(2), 8);
  s[Y].reorder({Y.axis(0), Y.axis(1), yxo, rc, ry, rx, yxi});
  s[Y].vectorize(yxi).unroll(rx);
  testing::Compiled k = compile_kernel(s, {X, W, R});
  std::vector<float> x = random_floats(ci * h * w, 9), wt = random_floats(co * ci * kh * kw, 10),
                     r(co * h * w);
  run_tasks(k, {x.data(), wt.data(), r.data()}, 2);
  for (int64_t o = 0; o < co; ++o) {
    for (int64_t yy = 0; yy < h; ++yy) {
      for (int64_t xx = 0; xx < w; ++xx) {
        double acc = 0;
        for (int64_t c = 0; c < ci; ++c) {
          for (int64_t dy = 0; dy < kh; ++dy) {
            for (int64_t dx = 0; dx < kw; ++dx) {
              int64_t sy = yy + dy - 1, sx = xx + dx - 1;
              if (sy < 0 || sy >= h || sx < 0 || sx >= w) continue;
              acc += double(x[(c * h + sy) * w + sx]) * wt[((o * ci + c) * kh + dy) * kw + dx];
            }
          }
        }
        REQUIRE(std::fabs(r[(o * h + yy) * w + xx] - std::max(acc, 0.0)) < 1e-5);
      }
    }
  }
}

TEST_CASE("a reduction to a rank-0 tensor", "[codegen][jit]") {
  te::Tensor A = te::placeholder({3, 5}, DType::f32, "A");
  te::IterVar r = te::reduce_axis({0, 3}, "r"), c = te::reduce_axis({0, 5}, "c");
  te::Tensor S = te::compute(
      {},
      [&]() {
        return te::sum(A(r, c), {r, c});
      },
      "S");
  te::Schedule s = te::create_schedule({S});
  s[S].split(c, 2);
  testing::Compiled k = compile_kernel(s, {A, S});
  std::vector<float> a = random_floats(15, 12);
  float out = NAN;
  run_tasks(k, {a.data(), &out});
  float ref = 0;
  for (float v : a) ref += v;
  CHECK(std::fabs(out - ref) < 1e-6);
}

TEST_CASE("a gather through data-dependent indices, vectorized", "[codegen][jit]") {
  const int64_t rows = 6, cols = 19, picks = 23;
  te::Tensor T = te::placeholder({rows, cols}, DType::f32, "T");
  te::Tensor I = te::placeholder({picks}, DType::i32, "I");
  // ONNX Gather semantics on axis 1 with negative indices wrapping around.
  te::Tensor G = te::compute(
      {rows, picks},
      [&](te::Var i, te::Var p) {
        te::Expr idx = te::cast(DType::i64, I(p));
        return T(i, te::select(idx < 0, idx + cols, idx));
      },
      "G");
  te::Schedule s = te::create_schedule({G});
  auto [po, pi] = s[G].split(G.axis(1), 8);
  s[G].vectorize(pi).parallel(G.axis(0));
  testing::Compiled k = compile_kernel(s, {T, I, G});
  std::vector<float> t = random_floats(rows * cols, 13), g(rows * picks);
  std::vector<int32_t> idx(picks);
  for (int64_t p = 0; p < picks; ++p) idx[p] = static_cast<int32_t>((p * 7) % (2 * cols) - cols);
  run_tasks(k, {t.data(), idx.data(), g.data()}, 2);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t p = 0; p < picks; ++p) {
      int64_t j = idx[p] < 0 ? idx[p] + cols : idx[p];
      REQUIRE(g[i * picks + p] == t[i * cols + j]);
    }
  }
}

TEST_CASE("strided vector reads and writes: transposes, reversals, vectorized outer axes",
          "[codegen][jit]") {
  // Lanes a constant distance apart are read and written one scalar a lane from lane 0's
  // address; under a tail's mask they are a masked gather (no lane past the mask is touched).
  for (int64_t cols : {16, 13}) {
    const int64_t rows = 11;
    te::Tensor A = te::placeholder({rows, cols}, DType::f32, "A");
    te::Tensor T = te::compute(
        {cols, rows}, [&](te::Var j, te::Var i) { return A(i, j) + A(rows - 1 - i, j); }, "T");
    te::Tensor R = te::compute(
        {rows, cols}, [&](te::Var i, te::Var j) { return A(i, cols - 1 - j) * 3.0f; }, "R");
    std::vector<float> a = random_floats(rows * cols, 14);
    for (int64_t factor : {4, 8, 16}) {
      INFO("cols " << cols << " vector of " << factor);
      te::Schedule s = te::create_schedule({T, R});
      auto [to, ti] = s[T].split(T.axis(1), factor);
      s[T].vectorize(ti);
      auto [ro, ri] = s[R].split(R.axis(1), factor);
      s[R].vectorize(ri);
      testing::Compiled k = compile_kernel(s, {A, T, R});
      std::vector<float> t(cols * rows + 1, -5.f), r(rows * cols + 1, -5.f);
      run_tasks(k, {a.data(), t.data(), r.data()});
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          REQUIRE(t[j * rows + i] == a[i * cols + j] + a[(rows - 1 - i) * cols + j]);
          REQUIRE(r[i * cols + j] == a[i * cols + cols - 1 - j] * 3.0f);
        }
      CHECK(t.back() == -5.f);
      CHECK(r.back() == -5.f);
    }
    // Vectorized along the outer axis: every store is strided too.
    te::Tensor B = te::compute(
        {rows, cols}, [&](te::Var i, te::Var j) { return A(i, j) > 0.0f; }, "B");
    te::Tensor C = te::compute(
        {rows, cols}, [&](te::Var i, te::Var j) { return te::select(B(i, j), A(i, j), 0.0f); },
        "C");
    te::Schedule s = te::create_schedule({B, C});
    auto [bo, bi] = s[B].split(B.axis(0), 8);
    s[B].reorder({bo, B.axis(1), bi});
    s[B].vectorize(bi);
    auto [co, ci] = s[C].split(C.axis(0), 8);
    s[C].reorder({co, C.axis(1), ci});
    s[C].vectorize(ci);
    testing::Compiled k = compile_kernel(s, {A, B, C});
    std::vector<uint8_t> b(rows * cols, 7);
    std::vector<float> c(rows * cols, -5.f);
    run_tasks(k, {a.data(), b.data(), c.data()});
    for (int64_t i = 0; i < rows * cols; ++i) {
      REQUIRE(b[i] == (a[i] > 0.0f ? 1 : 0));
      REQUIRE(c[i] == (a[i] > 0.0f ? a[i] : 0.0f));
    }
  }
}

TEST_CASE("a region shifted into its tensor at a consumer's tail", "[codegen][jit]") {
  for (int64_t n : {10, 13, 16}) {
    te::Tensor A = te::placeholder({n, 7}, DType::f32, "A");
    te::Tensor B = te::compute(
        {n, 7}, [&](te::Var i, te::Var j) { return A(i, j) * 2.0f; }, "B");
    te::Tensor C = te::compute(
        {n, 7}, [&](te::Var i, te::Var j) { return B(i, j) + B(i, 6 - j); }, "C");
    te::Schedule s = te::create_schedule({C});
    auto [io, ii] = s[C].split(C.axis(0), 4);
    s[C].vectorize(C.axis(1)).parallel(io);
    s[B].compute_at(s[C], io);
    testing::Compiled k = compile_kernel(s, {A, C});
    std::vector<float> a = random_floats(n * 7, 14), c(n * 7);
    run_tasks(k, {a.data(), c.data()}, 3);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < 7; ++j)
        REQUIRE(c[i * 7 + j] == a[i * 7 + j] * 2.0f + a[i * 7 + 6 - j] * 2.0f);
    }
  }
}
