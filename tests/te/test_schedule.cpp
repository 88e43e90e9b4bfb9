// Schedule primitives and the errors illegal schedules give (each names the stage and the axis).
#include <catch2/catch.hpp>

#include "collage/schedule.h"

using namespace collage;
namespace te = collage::te;

namespace {

struct MatMul {
  te::Tensor A = te::placeholder({16, 8}, DType::f32, "A");
  te::Tensor B = te::placeholder({8, 12}, DType::f32, "B");
  te::IterVar k = te::reduce_axis({0, 8}, "k");
  te::Tensor C = te::compute(
      {16, 12}, [this](te::Var i, te::Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
  te::Tensor D = te::compute(
      {16, 12}, [this](te::Var i, te::Var j) { return C(i, j) + 1.0f; }, "D");
};

// The schedule's first error has this code and its message contains `part`.
void check_error(const te::Schedule& s, const std::string& part) {
  INFO(s.status().message());
  CHECK(s.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.status().message()).find(part) != std::string::npos);
}

}  // namespace

TEST_CASE("split, fuse, reorder and tile change the loop order", "[te][schedule]") {
  MatMul m;
  te::Schedule s = te::create_schedule({m.D});
  auto [io, ii] = s[m.C].split(m.C.axis(0), 4);
  CHECK(io.name() == "i0.outer");
  CHECK(ii.dom().extent == 4);
  CHECK(io.dom().extent == 4);
  s[m.C].reorder({m.C.axis(1), io});
  auto names = [](const std::vector<te::IterVar>& v) {
    std::string r;
    for (const auto& iv : v) r += iv.name() + " ";
    return r;
  };
  CHECK(names(s[m.C].leaf_axes()) == "i1 i0.inner i0.outer k ");
  auto t = s[m.D].tile(m.D.axis(0), m.D.axis(1), 4, 5);
  CHECK(names(s[m.D].leaf_axes()) == "i0.outer i1.outer i0.inner i1.inner ");
  te::IterVar f = s[m.D].fuse(t[0], t[1]);
  CHECK(f.name() == "i0.outer.i1.outer.fused");
  CHECK(f.dom().extent == 4 * 3);
  CHECK(s.status().ok());
}

TEST_CASE("schedule errors name the stage and the axis", "[te][schedule]") {
  SECTION("vectorize a reduction axis") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.C].vectorize(m.k);
    check_error(s, "vectorize: stage 'C' cannot vectorize reduction axis 'k'");
  }
  SECTION("parallelize a reduction axis") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.C].parallel(m.k);
    check_error(s, "stage 'C' cannot parallelize reduction axis 'k'");
  }
  SECTION("split of an axis that was split away") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.C].split(m.C.axis(0), 4);
    s[m.C].split(m.C.axis(0), 2);
    check_error(s, "split: axis 'i0' is not a current loop of stage 'C'");
  }
  SECTION("split of a fused-away axis") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.D].fuse(m.D.axis(0), m.D.axis(1));
    s[m.D].split(m.D.axis(1), 2);
    check_error(s, "split: axis 'i1' is not a current loop of stage 'D'");
  }
  SECTION("axis of another stage") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.D].unroll(m.C.axis(0));
    check_error(s, "unroll: axis 'i0' is not a current loop of stage 'D'");
  }
  SECTION("split factor below one") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.D].split(m.D.axis(0), 0);
    check_error(s, "split: factor for axis 'i0' of stage 'D' must be >= 1, got 0");
  }
  SECTION("fuse of non-adjacent axes") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.C].fuse(m.C.axis(0), m.k);
    check_error(s, "fuse: axes 'i0' and 'k' of stage 'C' are not adjacent");
  }
  SECTION("fuse of data-parallel and reduction axes") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.C].fuse(m.C.axis(1), m.k);
    check_error(s, "fuse: stage 'C' cannot fuse data-parallel and reduction axes ('i1', 'k')");
  }
  SECTION("reorder lists an axis twice") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.D].reorder({m.D.axis(1), m.D.axis(1)});
    check_error(s, "reorder: axis 'i1' of stage 'D' is listed twice");
  }
  SECTION("compute_at to a stage that does not read the tensor") {
    MatMul m;
    te::Tensor E = te::compute(
        {16}, [&](te::Var i) { return m.A(i, 0) * 2.0f; }, "E");
    te::Schedule s = te::create_schedule({m.D, E});
    s[m.C].compute_at(s[E], E.axis(0));
    check_error(s,
                "compute_at: stage 'E' does not read 'C' (directly or through other stages), so "
                "'C' cannot be computed at it");
  }
  SECTION("compute_at an output") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.D].compute_at(s[m.C], m.C.axis(0));
    check_error(s, "compute_at: stage 'D' is an output and stays at the top level");
  }
  SECTION("compute_at to an axis that is not a loop of the consumer") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.C].compute_at(s[m.D], m.C.axis(0));
    check_error(s, "compute_at: axis 'i0' is not a current loop of stage 'D'");
  }
  SECTION("inline a reduction") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.C].compute_inline();
    check_error(s, "compute_inline: stage 'C' is a reduction and cannot be inlined");
  }
  SECTION("inline an output") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.D].compute_inline();
    check_error(s, "compute_inline: stage 'D' is an output");
  }
  SECTION("primitive on a placeholder") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.A].split(te::IterVar(), 2);
    check_error(s, "split: stage 'A' is a placeholder and has no loops");
  }
  SECTION("unknown tensor") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.C});
    s[m.D].vectorize(m.D.axis(1));
    check_error(s, "schedule has no stage for tensor 'D'");
  }
  SECTION("bind with an unknown thread tag") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.D].bind(m.D.axis(0), "warpIdx.x");
    check_error(s, "bind: unknown thread tag 'warpIdx.x' for axis 'i0' of stage 'D'");
  }
  SECTION("split after choosing the loop kind") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.D].vectorize(m.D.axis(1));
    s[m.D].split(m.D.axis(1), 4);
    check_error(s, "split: axis 'i1' of stage 'D' is already vectorized");
  }
  SECTION("cache_write after other primitives") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.C].split(m.C.axis(0), 4);
    s.cache_write(m.C);
    check_error(s, "cache_write: stage 'C' must be cached before any other primitive");
  }
  SECTION("pack stage reading a compute") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.C].pack();
    // C reads only placeholders, so it may be a pack stage; D reads C and may not.
    CHECK(s.status().ok());
    s[m.D].pack();
    check_error(s, "pack: stage 'D' reads 'C' which is not a placeholder");
  }
  SECTION("the first error is kept") {
    MatMul m;
    te::Schedule s = te::create_schedule({m.D});
    s[m.C].vectorize(m.k);
    s[m.D].split(m.D.axis(0), -3);
    check_error(s, "cannot vectorize reduction axis 'k'");
  }
}

TEST_CASE("malformed computes are reported by create_schedule", "[te][schedule]") {
  te::Tensor A = te::placeholder({4, 4}, DType::f32, "A");
  SECTION("arity") {
    te::Tensor B = te::compute(
        {4, 4, 4}, [&](te::Var i, te::Var j) { return A(i, j); }, "B");
    te::Schedule s = te::create_schedule({B});
    check_error(s,
                "compute 'B': the index function takes 2 indices but the shape 4x4x4 has rank 3");
  }
  SECTION("index count") {
    te::Tensor B = te::compute(
        {4}, [&](te::Var i) { return A(i); }, "B");
    te::Schedule s = te::create_schedule({B});
    check_error(s, "compute 'B' reads 'A' with 1 indices but it has rank 2");
  }
  SECTION("nested reduction") {
    te::IterVar k = te::reduce_axis({0, 4}, "k");
    te::Tensor B = te::compute(
        {4}, [&](te::Var i) { return te::sum(A(i, k), {k}) * 2.0f; }, "B");
    te::Schedule s = te::create_schedule({B});
    check_error(s, "compute 'B' has a reduction that is not the outermost expression of its body");
  }
  SECTION("free variable") {
    te::Var x("x");
    te::Tensor B = te::compute(
        {4}, [&](te::Var i) { return A(i, x); }, "B");
    te::Schedule s = te::create_schedule({B});
    check_error(s, "compute 'B' uses variable 'x'");
  }
  SECTION("float index") {
    te::Tensor B = te::compute(
        {4}, [&](te::Var i) { return A(i, te::cast(DType::f32, i)); }, "B");
    te::Schedule s = te::create_schedule({B});
    check_error(s, "compute 'B' reads 'A' with the non-integer index f32(i0)");
  }
}

TEST_CASE("schedules copy deeply", "[te][schedule]") {
  MatMul m;
  te::Schedule s = te::create_schedule({m.D});
  te::Schedule copy = s;
  copy[m.D].split(m.D.axis(0), 4);
  CHECK(s[m.D].leaf_axes().size() == 2);
  CHECK(copy[m.D].leaf_axes().size() == 3);
  CHECK(copy.to_string().find("split i0 -> i0.outer, i0.inner factor 4") != std::string::npos);
}
