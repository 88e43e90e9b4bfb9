// The generated code on 8- and 16-bit integers against the reference: arithmetic that wraps,
// division, min/max and comparisons without a sign for the unsigned types, and conversions that
// zero-extend them; comparisons whose operands' difference overflows the type (i8 100 > -100); inputs across each type's whole range (the harness's random integers stay in
// [0, 5), below where signed and unsigned differ).
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "collage/ops/elementwise.h"
#include "common/backend_check.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

namespace {

// n values of `t` spread over its range by a multiplicative step; never 0 when `nonzero`.
Tensor spread(DType t, int64_t n, uint64_t step, bool nonzero) {
  Tensor out(t, {n});
  const bool byte = t == DType::u8 || t == DType::i8;
  const uint64_t mod = byte ? 256 : 65536;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t v = (static_cast<uint64_t>(i) * step + 11) % mod;
    if (nonzero && v == 0) v = 1;
    if (byte) out.data<uint8_t>()[i] = static_cast<uint8_t>(v);  // i8: the same bits
    else out.data<uint16_t>()[i] = static_cast<uint16_t>(v);      // i16 likewise
  }
  return out;
}

}  // namespace

TEST_CASE("te_ops: 8- and 16-bit integer arithmetic, comparisons and casts", "[te_ops]") {
  Context ctx;
  const int64_t n = 61;
  for (DType t : {DType::u8, DType::i8, DType::u16, DType::i16}) {
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Less", "Greater",
                           "Equal"}) {
      INFO(op << " " << dtype_name(t));
      const bool divides = std::string(op) == "Div" || std::string(op) == "Mod";
      // Mod of signed integers follows the divisor's sign (fmod 0): the reference's definition.
      check_group(native_backend(), single_op_graph(ctx, op, {{t, {n}}, {t, {n}}}),
                  {.claim = true,
                   .inputs = {spread(t, n, 97, false), spread(t, n, 53, divides)}});
    }
    for (const char* to : {"f32", "i32", "i64", "u8", "bool"}) {
      INFO("Cast " << dtype_name(t) << " to " << to);
      auto attrs = make_attrs<CastAttrs>([&](auto& a) { a.to = to; });
      check_group(native_backend(), single_op_graph(ctx, "Cast", {{t, {n}}}, attrs),
                  {.claim = true, .inputs = {spread(t, n, 97, false)}});
    }
  }
  // f32 to the unsigned types saturates, as the reference's conversion does.
  for (const char* to : {"u8", "u16", "i16"}) {
    INFO("Cast f32 to " << to);
    auto attrs = make_attrs<CastAttrs>([&](auto& a) { a.to = to; });
    check_group(native_backend(), single_op_graph(ctx, "Cast", {{DType::f32, {n}}}, attrs),
                {.lo = 0.f, .hi = 250.f, .claim = true});
  }
}

TEST_CASE("te_ops: ReduceMax and ReduceMin on u8 start from the type's bounds", "[te_ops]") {
  Context ctx;
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    INFO(op);
    auto attrs = make_attrs<ReduceAttrs>([](auto& a) { a.axes = {1}; });
    Tensor x = spread(DType::u8, 6 * 7, 97, false);
    Tensor x2(DType::u8, {6, 7});
    std::memcpy(x2.raw(), x.raw(), x.bytes());
    check_group(native_backend(), single_op_graph(ctx, op, {{DType::u8, {6, 7}}}, attrs),
                {.claim = true, .inputs = {x2}});
  }
}
