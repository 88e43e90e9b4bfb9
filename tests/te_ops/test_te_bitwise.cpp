// Conformance of the TE computes of the bit operators (lib/te_ops/bitwise_ops.cpp) against the
// reference kernels: every integer type, shifts past the width, BitCast between types.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "collage/ops/elementwise.h"
#include "collage/ops/indexing.h"
#include "collage/ops/math.h"
#include "common/backend_check.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

namespace {

// n values of `t` whose bytes run through every bit pattern (a multiplicative step).
Tensor bit_patterns(DType t, Shape shape, uint64_t step) {
  Tensor out(t, shape);
  auto* bytes = static_cast<uint8_t*>(out.raw());
  for (size_t i = 0; i < out.bytes(); ++i) bytes[i] = static_cast<uint8_t>((i * step + 7) % 251);
  return out;
}

}  // namespace

TEST_CASE("te_ops: BitwiseAnd/Or/Xor/Not on every integer type", "[te_ops]") {
  Context ctx;
  for (DType t : {DType::i8, DType::u8, DType::i16, DType::u16, DType::i32, DType::u32,
                  DType::i64, DType::u64}) {
    for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
      INFO(op << " " << dtype_name(t));
      check_group(native_backend(), single_op_graph(ctx, op, {{t, {3, 29}}, {t, {29}}}),
                  {.claim = true,
                   .inputs = {bit_patterns(t, {3, 29}, 37), bit_patterns(t, {29}, 101)}});
    }
    INFO("BitwiseNot " << dtype_name(t));
    check_group(native_backend(), single_op_graph(ctx, "BitwiseNot", {{t, {45}}}),
                {.claim = true, .inputs = {bit_patterns(t, {45}, 37)}});
  }
}

TEST_CASE("te_ops: BitShift shifts unsigned values, by the width or more to 0", "[te_ops]") {
  Context ctx;
  for (DType t : {DType::u8, DType::u16, DType::u32, DType::u64}) {
    const int64_t n = 70;
    // Shift amounts 0 .. 69: past every width.
    Tensor amounts(t, {n});
    for (int64_t i = 0; i < n; ++i) {
      switch (t) {
        case DType::u8: amounts.data<uint8_t>()[i] = static_cast<uint8_t>(i); break;
        case DType::u16: amounts.data<uint16_t>()[i] = static_cast<uint16_t>(i); break;
        case DType::u32: amounts.data<uint32_t>()[i] = static_cast<uint32_t>(i); break;
        default: amounts.data<uint64_t>()[i] = static_cast<uint64_t>(i); break;
      }
    }
    for (const char* direction : {"LEFT", "RIGHT"}) {
      INFO("BitShift " << direction << " " << dtype_name(t));
      auto attrs = make_attrs<BitShiftAttrs>([&](auto& a) { a.direction = direction; });
      check_group(native_backend(), single_op_graph(ctx, "BitShift", {{t, {n}}, {t, {n}}}, attrs),
                  {.claim = true, .inputs = {bit_patterns(t, {n}, 59), amounts}});
    }
  }
}

TEST_CASE("te_ops: BitCast reinterprets the bits", "[te_ops]") {
  Context ctx;
  struct Case {
    DType from;
    const char* to;
  };
  const std::vector<Case> cases = {
      {DType::f32, "i32"}, {DType::i32, "f32"}, {DType::u32, "i32"}, {DType::f64, "i64"},
      {DType::i64, "f64"}, {DType::u16, "i16"}, {DType::f16, "u16"}, {DType::bf16, "f16"},
      {DType::i8, "u8"},   {DType::boolean, "u8"}};
  for (const Case& c : cases) {
    INFO("BitCast " << dtype_name(c.from) << " to " << c.to);
    auto attrs = make_attrs<CastAttrs>([&](auto& a) { a.to = c.to; });
    Tensor x = c.from == DType::boolean || is_float(c.from)
                   ? random_tensor({c.from, {4, 9}}, 5, -3.f, 3.f)
                   : bit_patterns(c.from, {4, 9}, 37);
    check_group(native_backend(), single_op_graph(ctx, "BitCast", {{c.from, {4, 9}}}, attrs),
                {.claim = true, .inputs = {x}});
  }
  // To bool would keep only one bit of the byte: refused when claimed, not when built.
  auto to_bool = make_attrs<CastAttrs>([](auto& a) { a.to = "bool"; });
  CHECK_FALSE(try_group(native_backend(),
                        single_op_graph(ctx, "BitCast", {{DType::u8, {4}}}, to_bool))
                  .build.ok());
}
