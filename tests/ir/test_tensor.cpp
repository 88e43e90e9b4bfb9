// Tensor storage, dtype helpers and conversions.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "collage/tensor.h"

using namespace collage;

TEST_CASE("dtype names round trip", "[tensor]") {
  for (DType t : kAllDTypes) CHECK(parse_dtype(dtype_name(t)) == t);
  CHECK_FALSE(parse_dtype("f128").has_value());
  CHECK(dtype_size(DType::i64) == 8);
  CHECK(dtype_size(DType::u16) == 2);
  CHECK(is_integer(DType::u64));
  CHECK(is_unsigned(DType::u8));
  CHECK_FALSE(is_unsigned(DType::i8));
  CHECK(is_float(DType::f64));
}

TEST_CASE("half and bfloat16 conversions round to nearest even", "[tensor]") {
  CHECK(half_to_float(float_to_half(1.0f)) == 1.0f);
  CHECK(half_to_float(float_to_half(65504.0f)) == 65504.0f);
  CHECK(std::isinf(half_to_float(float_to_half(1e6f))));
  CHECK(half_to_float(float_to_half(5.96046448e-8f)) == 5.96046448e-8f);  // smallest subnormal
  CHECK(std::isnan(half_to_float(float_to_half(NAN))));
  CHECK(bfloat16_to_float(float_to_bfloat16(1.5f)) == 1.5f);
  CHECK(bfloat16_to_float(float_to_bfloat16(1.00390625f)) == 1.0f);  // tie rounds to even
}

TEST_CASE("tensors share buffers, clone deep-copies, cast converts", "[tensor]") {
  Tensor a = Tensor::from_f32({2, 2}, std::vector<float>{1.5f, -2.5f, 3.f, 0.f});
  Tensor b = a;
  b.data<float>()[0] = 7.f;
  CHECK(a.data<float>()[0] == 7.f);
  Tensor c = a.clone();
  c.data<float>()[0] = 1.f;
  CHECK(a.data<float>()[0] == 7.f);
  Tensor i = a.cast(DType::i64);
  CHECK(i.to_int64_vector() == std::vector<int64_t>{7, -2, 3, 0});
  Tensor bl = a.cast(DType::boolean);
  CHECK(bl.data<uint8_t>()[3] == 0);
  CHECK(bl.data<uint8_t>()[1] == 1);
  CHECK(a.reshaped({4}).shape() == Shape{4});
  CHECK(shape_to_string({1, 3, 224, 224}) == "1x3x224x224");
  CHECK(shape_to_string({}) == "scalar");
  CHECK(reinterpret_cast<uintptr_t>(a.raw()) % 64 == 0);
}

TEST_CASE("float elements read as int64 saturate outside its range; NaN reads as 0", "[tensor]") {
  // A fuzzer finding: Resize sizes given as FLOAT held -2.1e38 (an undefined conversion).
  const float inf = std::numeric_limits<float>::infinity();
  Tensor t =
      Tensor::from_f32({6}, std::vector<float>{-2.1e38f, 3e19f, inf, std::nanf(""), -7.9f, 42.f});
  CHECK(t.to_int64_vector() == std::vector<int64_t>{std::numeric_limits<int64_t>::min(),
                                                    std::numeric_limits<int64_t>::max(),
                                                    std::numeric_limits<int64_t>::max(), 0, -7,
                                                    42});
}

TEST_CASE("string tensors own std::string elements; clone, identical and hash see the text",
          "[tensor]") {
  const std::vector<std::string> words = {"alpha", "", std::string(100, 'x')};
  Tensor t = Tensor::from_strings({3}, words);
  CHECK(t.dtype() == DType::str);
  CHECK(dtype_name(DType::str) == "str");
  Tensor copy = t.clone();
  copy.data<std::string>()[0] = "beta";
  CHECK(t.data<std::string>()[0] == "alpha");  // a deep copy
  CHECK_FALSE(copy.identical(t));
  Tensor same = Tensor::from_strings({3}, words);
  CHECK(same.identical(t));
  CHECK_FALSE(same.reshaped({1, 3}).identical(t));  // the shape counts too
  // An empty string tensor still has a buffer.
  Tensor none(DType::str, {0, 2});
  CHECK_FALSE(none.empty());
  CHECK(none.numel() == 0);
}
