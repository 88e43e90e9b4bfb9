// Lowering: loop nests for splits with tails, fuse, compute_at regions, compute_inline,
// cache_write, reductions, pack stages, and the errors for schedules a kernel cannot express.
#include <catch2/catch.hpp>

#include "collage/schedule.h"

using namespace collage;
namespace te = collage::te;

namespace {

std::string lowered(const te::Schedule& s, const std::vector<te::Tensor>& args) {
  absl::StatusOr<te::PrimFunc> f = te::lower(s, args, "f");
  if (!f.ok()) return std::string(f.status().message());
  return te::to_string(*f);
}

void check_lower_error(const te::Schedule& s, const std::vector<te::Tensor>& args,
                       const std::string& part) {
  absl::StatusOr<te::PrimFunc> f = te::lower(s, args, "f");
  REQUIRE_FALSE(f.ok());
  INFO(f.status().message());
  CHECK(f.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(f.status().message()).find(part) != std::string::npos);
}

}  // namespace

TEST_CASE("a split with a tail guards the padded iterations at the innermost loop they use",
          "[te][lower]") {
  te::Tensor A = te::placeholder({10, 7}, DType::f32, "A");
  te::Tensor B = te::compute(
      {10, 7}, [&](te::Var i, te::Var j) { return A(i, j) * 2.0f + 1.0f; }, "B");
  te::Schedule s = te::create_schedule({B});
  auto [io, ii] = s[B].split(B.axis(0), 4);
  auto [jo, ji] = s[B].split(B.axis(1), 4);
  s[B].reorder({io, jo, ii, ji}).vectorize(ji).parallel(io);
  CHECK(lowered(s, {A, B}) ==
        "func f(A: f32[10x7], B: f32[10x7]) {\n"
        "  parallel for (i0.outer, 0, 3) {\n"
        "    for (i1.outer, 0, 2) {\n"
        "      for (i0.inner, 0, 4) {\n"
        "        if (i0.outer*4 + i0.inner < 10) {\n"
        "          vectorized for (i1.inner, 0, 4) {\n"
        "            if (i1.outer*4 + i1.inner < 7) {\n"
        "              B[i0.outer*4 + i0.inner, i1.outer*4 + i1.inner] = "
        "A[i0.outer*4 + i0.inner, i1.outer*4 + i1.inner]*2.0f + 1.0f\n"
        "            }\n"
        "          }\n"
        "        }\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n");
}

TEST_CASE("an exact split needs no guard", "[te][lower]") {
  te::Tensor A = te::placeholder({8}, DType::f32, "A");
  te::Tensor B = te::compute(
      {8}, [&](te::Var i) { return A(i) + 1.0f; }, "B");
  te::Schedule s = te::create_schedule({B});
  auto [o, i] = s[B].split(B.axis(0), 4);
  s[B].unroll(i);
  CHECK(lowered(s, {A, B}) ==
        "func f(A: f32[8], B: f32[8]) {\n"
        "  for (i0.outer, 0, 2) {\n"
        "    unrolled for (i0.inner, 0, 4) {\n"
        "      B[i0.outer*4 + i0.inner] = A[i0.outer*4 + i0.inner] + 1.0f\n"
        "    }\n"
        "  }\n"
        "}\n");
}

TEST_CASE("split_nparts fixes the outer extent", "[te][lower]") {
  te::Tensor A = te::placeholder({9}, DType::f32, "A");
  te::Tensor B = te::compute(
      {9}, [&](te::Var i) { return A(i); }, "B");
  te::Schedule s = te::create_schedule({B});
  s[B].split_nparts(B.axis(0), 2);
  CHECK(lowered(s, {A, B}) ==
        "func f(A: f32[9], B: f32[9]) {\n"
        "  for (i0.outer, 0, 2) {\n"
        "    for (i0.inner, 0, 5) {\n"
        "      if (i0.outer*5 + i0.inner < 9) {\n"
        "        B[i0.outer*5 + i0.inner] = A[i0.outer*5 + i0.inner]\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n");
}

TEST_CASE("fused loops index through floordiv/floormod and flatten back", "[te][lower]") {
  te::Tensor A = te::placeholder({3, 5}, DType::f32, "A");
  te::Tensor B = te::compute(
      {3, 5}, [&](te::Var i, te::Var j) { return A(i, j) * 2.0f; }, "B");
  te::Schedule s = te::create_schedule({B});
  te::IterVar f = s[B].fuse(B.axis(0), B.axis(1));
  auto [fo, fi] = s[B].split(f, 4);
  s[B].vectorize(fi).parallel(fo);
  std::string text = lowered(s, {A, B});
  CHECK(text.find("parallel for (i0.i1.fused.outer, 0, 4)") != std::string::npos);
  CHECK(text.find("if (i0.i1.fused.outer*4 + i0.i1.fused.inner < 15)") != std::string::npos);
  CHECK(text.find("B[floordiv(i0.i1.fused.outer*4 + i0.i1.fused.inner, 5), "
                  "floormod(i0.i1.fused.outer*4 + i0.i1.fused.inner, 5)]") != std::string::npos);
}

TEST_CASE(
    "compute_at computes the region one iteration reads (with its halo), clamped to the tensor",
    "[te][lower]") {
  te::Tensor A = te::placeholder({10}, DType::f32, "A");
  te::Tensor B = te::compute(
      {11}, [&](te::Var i) { return A(te::minimum(i, 9)) + 1.0f; }, "B");
  te::Tensor C = te::compute(
      {10}, [&](te::Var i) { return B(i) + B(i + 1); }, "C");
  te::Schedule s = te::create_schedule({C});
  auto [io, ii] = s[C].split(C.axis(0), 4);
  s[B].compute_at(s[C], io);
  CHECK(lowered(s, {A, C}) ==
        "func f(A: f32[10], C: f32[10]) {\n"
        "  for (i0.outer, 0, 3) {\n"
        "    allocate B: f32[5] {\n"
        "      for (i0, 0, 5) {\n"
        "        B[i0] = A[min(i0.outer*4 + i0, 9)] + 1.0f\n"
        "      }\n"
        "      for (i0.inner, 0, 4) {\n"
        "        if (i0.outer*4 + i0.inner < 10) {\n"
        "          C[i0.outer*4 + i0.inner] = B[i0.inner] + B[i0.inner + 1]\n"
        "        }\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n");
}

TEST_CASE("a region that would read past its input is shifted into the tensor", "[te][lower]") {
  te::Tensor A = te::placeholder({10}, DType::f32, "A");
  te::Tensor B = te::compute(
      {10}, [&](te::Var i) { return A(i) * 2.0f; }, "B");
  te::Tensor C = te::compute(
      {10}, [&](te::Var i) { return B(i) + 1.0f; }, "C");
  te::Schedule s = te::create_schedule({C});
  auto [io, ii] = s[C].split(C.axis(0), 4);
  s[B].compute_at(s[C], io);
  // The last block (rows 8..11) would read A[10] and A[11]: it computes rows 6..9 instead.
  CHECK(
      lowered(s, {A, C}) ==
      "func f(A: f32[10], C: f32[10]) {\n"
      "  for (i0.outer, 0, 3) {\n"
      "    allocate B: f32[4] {\n"
      "      for (i0, 0, 4) {\n"
      "        B[i0] = A[min(i0.outer*4, 6) + i0]*2.0f\n"
      "      }\n"
      "      for (i0.inner, 0, 4) {\n"
      "        if (i0.outer*4 + i0.inner < 10) {\n"
      "          C[i0.outer*4 + i0.inner] = B[i0.outer*4 + i0.inner - min(i0.outer*4, 6)] + 1.0f\n"
      "        }\n"
      "      }\n"
      "    }\n"
      "  }\n"
      "}\n");
}

TEST_CASE("compute_inline substitutes the producer's body", "[te][lower]") {
  te::Tensor A = te::placeholder({10}, DType::f32, "A");
  te::Tensor B = te::compute(
      {11}, [&](te::Var i) { return A(te::minimum(i, 9)) + 1.0f; }, "B");
  te::Tensor C = te::compute(
      {10}, [&](te::Var i) { return B(i) + B(i + 1); }, "C");
  te::Schedule s = te::create_schedule({C});
  s[B].compute_inline();
  CHECK(lowered(s, {A, C}) ==
        "func f(A: f32[10], C: f32[10]) {\n"
        "  for (i0, 0, 10) {\n"
        "    C[i0] = A[i0] + 1.0f + (A[min(i0 + 1, 9)] + 1.0f)\n"
        "  }\n"
        "}\n");
}

TEST_CASE("an intermediate at the top level gets its own allocation", "[te][lower]") {
  te::Tensor A = te::placeholder({4}, DType::f32, "A");
  te::Tensor B = te::compute(
      {4}, [&](te::Var i) { return A(i) * 3.0f; }, "B");
  te::Tensor C = te::compute(
      {4}, [&](te::Var i) { return B(3 - i); }, "C");
  te::Schedule s = te::create_schedule({C});
  CHECK(lowered(s, {A, C}) ==
        "func f(A: f32[4], C: f32[4]) {\n"
        "  allocate B: f32[4] {\n"
        "    for (i0, 0, 4) {\n"
        "      B[i0] = A[i0]*3.0f\n"
        "    }\n"
        "    for (i0_1, 0, 4) {\n"
        "      C[i0_1] = B[3 - i0_1]\n"
        "    }\n"
        "  }\n"
        "}\n");
}

TEST_CASE("a reduction initialises before its first reduction loop and guards a split tail",
          "[te][lower]") {
  te::Tensor A = te::placeholder({6, 10}, DType::f32, "A");
  te::IterVar k = te::reduce_axis({0, 10}, "k");
  te::Tensor S = te::compute(
      {6}, [&](te::Var i) { return te::max(A(i, k), {k}); }, "S");
  te::Schedule s = te::create_schedule({S});
  s[S].split(k, 4);
  CHECK(lowered(s, {A, S}) ==
        "func f(A: f32[6x10], S: f32[6]) {\n"
        "  for (i0, 0, 6) {\n"
        "    S[i0] = -inf\n"
        "    for (k.outer, 0, 3) {\n"
        "      for (k.inner, 0, 4) {\n"
        "        if (k.outer*4 + k.inner < 10) {\n"
        "          S[i0] = max(S[i0], A[i0, k.outer*4 + k.inner])\n"
        "        }\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n");
}

TEST_CASE("cache_write accumulates a tile in a local buffer computed at the tile", "[te][lower]") {
  te::Tensor A = te::placeholder({8, 4}, DType::f32, "A");
  te::Tensor B = te::placeholder({4, 8}, DType::f32, "B");
  te::IterVar k = te::reduce_axis({0, 4}, "k");
  te::Tensor C = te::compute(
      {8, 8}, [&](te::Var i, te::Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
  te::Schedule s = te::create_schedule({C});
  te::Tensor CC = s.cache_write(C);
  CHECK(CC.name() == "C.local");
  auto t = s[C].tile(C.axis(0), C.axis(1), 2, 4);
  s[CC].compute_at(s[C], t[1]);
  s[CC].reorder({s[CC].reduce_axis(0), CC.axis(0), CC.axis(1)});
  s[CC].vectorize(CC.axis(1));
  s[C].vectorize(t[3]);
  CHECK(
      lowered(s, {A, B, C}) ==
      "func f(A: f32[8x4], B: f32[4x8], C: f32[8x8]) {\n"
      "  for (i0.outer, 0, 4) {\n"
      "    for (i1.outer, 0, 2) {\n"
      "      allocate C.local: f32[2x4] {\n"
      "        for (i0.c, 0, 2) {\n"
      "          vectorized for (i1.c, 0, 4) {\n"
      "            C.local[i0.c, i1.c] = 0.0f\n"
      "          }\n"
      "        }\n"
      "        for (k, 0, 4) {\n"
      "          for (i0.c, 0, 2) {\n"
      "            vectorized for (i1.c, 0, 4) {\n"
      "              C.local[i0.c, i1.c] = C.local[i0.c, i1.c] + "
      "A[i0.outer*2 + i0.c, k]*B[k, i1.outer*4 + i1.c]\n"
      "            }\n"
      "          }\n"
      "        }\n"
      "        for (i0.inner, 0, 2) {\n"
      "          vectorized for (i1.inner, 0, 4) {\n"
      "            C[i0.outer*2 + i0.inner, i1.outer*4 + i1.inner] = C.local[i0.inner, i1.inner]\n"
      "          }\n"
      "        }\n"
      "      }\n"
      "    }\n"
      "  }\n"
      "}\n");
}

TEST_CASE("compute_at a loop that encloses the reader's own attach point", "[te][lower]") {
  // Ap is read by C.local, which is computed inside C's loops: Ap is computed at C's outer loop
  // (once per row) rather than for every tile.
  te::Tensor A = te::placeholder({4, 3}, DType::f32, "A");
  te::Tensor Ap = te::compute(
      {4, 3}, [&](te::Var i, te::Var k) { return A(i, k) * 2.0f; }, "Ap");
  te::IterVar k = te::reduce_axis({0, 3}, "k");
  te::Tensor C = te::compute(
      {4, 6},
      [&](te::Var i, te::Var j) { return te::sum(Ap(i, k) * te::cast(DType::f32, j), {k}); }, "C");
  te::Schedule s = te::create_schedule({C});
  te::Tensor CC = s.cache_write(C);
  auto [jo, ji] = s[C].split(C.axis(1), 3);
  s[CC].compute_at(s[C], jo);
  s[Ap].compute_at(s[C], C.axis(0));
  CHECK(lowered(s, {A, C}) ==
        "func f(A: f32[4x3], C: f32[4x6]) {\n"
        "  for (i0, 0, 4) {\n"
        "    allocate Ap: f32[1x3] {\n"
        "      for (i1, 0, 3) {\n"
        "        Ap[0, i1] = A[i0, i1]*2.0f\n"
        "      }\n"
        "      for (i1.outer, 0, 2) {\n"
        "        allocate C.local: f32[1x3] {\n"
        "          for (i1.c, 0, 3) {\n"
        "            C.local[0, i1.c] = 0.0f\n"
        "            for (k, 0, 3) {\n"
        "              C.local[0, i1.c] = C.local[0, i1.c] + Ap[0, k]*f32(i1.outer*3 + i1.c)\n"
        "            }\n"
        "          }\n"
        "          for (i1.inner, 0, 3) {\n"
        "            C[i0, i1.outer*3 + i1.inner] = C.local[0, i1.inner]\n"
        "          }\n"
        "        }\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n");
  // Computing Ap deeper than where its reader C.local is computed is refused.
  te::Schedule bad = te::create_schedule({C});
  te::Tensor BC = bad.cache_write(C);
  auto [bo, bi] = bad[C].split(C.axis(1), 3);
  bad[BC].compute_at(bad[C], C.axis(0));
  bad[Ap].compute_at(bad[C], bo);
  check_lower_error(bad, {A, C},
                    "stage 'Ap' is computed at axis 'i1.outer' of 'C', inside the loop where "
                    "'C.local' (which needs it) is computed");
}

TEST_CASE("a pack stage is an input of the main kernel and a kernel of its own", "[te][lower]") {
  te::Tensor B = te::placeholder({4, 8}, DType::f32, "B");
  te::Tensor Bp = te::compute(
      {2, 4, 4}, [&](te::Var o, te::Var k, te::Var l) { return B(k, o * 4 + l); }, "Bp");
  te::Tensor C = te::compute(
      {4, 8},
      [&](te::Var k, te::Var j) { return Bp(te::floordiv(j, 4), k, te::floormod(j, 4)) * 2.0f; },
      "C");
  te::Schedule s = te::create_schedule({C});
  s[Bp].pack();
  CHECK(lowered(s, {Bp, C}) ==
        "func f(Bp: f32[2x4x4], C: f32[4x8]) {\n"
        "  for (i0, 0, 4) {\n"
        "    for (i1, 0, 8) {\n"
        "      C[i0, i1] = Bp[floordiv(i1, 4), i0, floormod(i1, 4)]*2.0f\n"
        "    }\n"
        "  }\n"
        "}\n");
  absl::StatusOr<te::PrimFunc> p = te::lower_pack(s, Bp, {B, Bp}, "pack");
  REQUIRE(p.ok());
  CHECK(te::to_string(*p) ==
        "func pack(B: f32[4x8], Bp: f32[2x4x4]) {\n"
        "  for (i0, 0, 2) {\n"
        "    for (i1, 0, 4) {\n"
        "      for (i2, 0, 4) {\n"
        "        Bp[i0, i1, i2] = B[i1, i0*4 + i2]\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n");
  // Without the packed argument the pack runs inside the kernel.
  CHECK(lowered(s, {B, C}).find("allocate Bp: f32[2x4x4]") != std::string::npos);
  absl::StatusOr<te::PrimFunc> bad = te::lower_pack(s, C, {B, C}, "pack");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()) ==
        "lower_pack 'pack': 'C' is not a pack stage of this schedule");
}

TEST_CASE("bound loops stay in the loop IR", "[te][lower]") {
  te::Tensor A = te::placeholder({64}, DType::f32, "A");
  te::Tensor B = te::compute(
      {64}, [&](te::Var i) { return A(i) + 1.0f; }, "B");
  te::Schedule s = te::create_schedule({B});
  auto [bx, tx] = s[B].split(B.axis(0), 32);
  s[B].bind(bx, "blockIdx.x").bind(tx, "threadIdx.x");
  std::string text = lowered(s, {A, B});
  CHECK(text.find("for [blockIdx.x] (i0.outer, 0, 2)") != std::string::npos);
  CHECK(text.find("for [threadIdx.x] (i0.inner, 0, 32)") != std::string::npos);
}

TEST_CASE("lowering errors", "[te][lower]") {
  te::Tensor A = te::placeholder({16, 16}, DType::f32, "A");
  te::Tensor B = te::compute(
      {16, 16}, [&](te::Var i, te::Var j) { return A(i, j) + 1.0f; }, "B");
  te::Tensor C = te::compute(
      {16, 16}, [&](te::Var i, te::Var j) { return B(j, i) * 2.0f; }, "C");
  SECTION("parallel loop that is not outermost") {
    te::Schedule s = te::create_schedule({C});
    s[C].parallel(C.axis(1));
    check_lower_error(
        s, {A, C}, "stage 'C': parallel loop 'i1' must be the outermost loop of a top-level stage");
  }
  SECTION("parallel stage beside another top-level stage") {
    te::Schedule s = te::create_schedule({C});
    s[C].parallel(C.axis(0));
    check_lower_error(s, {A, C},
                      "stage 'B' is computed at the top level beside parallel stage 'C'");
  }
  SECTION("computed inside a vectorized loop") {
    te::Schedule s = te::create_schedule({C});
    s[C].vectorize(C.axis(1));
    s[B].compute_at(s[C], C.axis(1));
    check_lower_error(s, {A, C},
                      "stage 'B' is computed at axis 'i1' of 'C', inside its vectorized loop 'i1'");
  }
  SECTION("attach axis split afterwards") {
    te::Schedule s = te::create_schedule({C});
    s[B].compute_at(s[C], C.axis(0));
    s[C].split(C.axis(0), 4);
    check_lower_error(
        s, {A, C},
        "stage 'B' is computed at axis 'i0' of 'C', which is no longer one of its loops");
  }
  SECTION("inlined argument") {
    te::Schedule s = te::create_schedule({C});
    s[B].compute_inline();
    check_lower_error(s, {A, B, C}, "argument 'B' is computed inline and has no storage");
  }
  SECTION("missing input") {
    te::Schedule s = te::create_schedule({C});
    check_lower_error(s, {C}, "tensor 'A' is read but is not among the arguments");
  }
  SECTION("missing output") {
    te::Schedule s = te::create_schedule({C});
    check_lower_error(s, {A}, "output 'C' is not among the arguments");
  }
  SECTION("two readers of an attached stage") {
    te::Tensor D = te::compute(
        {16, 16}, [&](te::Var i, te::Var j) { return B(i, j) - 1.0f; }, "D");
    te::Schedule s = te::create_schedule({C, D});
    s[B].compute_at(s[C], C.axis(0));
    check_lower_error(s, {A, C, D}, "stage 'B' is computed at 'C' but 'D' reads it too");
  }
  SECTION("the schedule's own error comes first") {
    te::Schedule s = te::create_schedule({C});
    s[C].split(C.axis(0), 0);
    check_lower_error(s, {A, C}, "split: factor for axis 'i0' of stage 'C' must be >= 1");
  }
}
