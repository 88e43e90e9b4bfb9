// Tests of .npy reading and writing: round trips, numpy compatibility, and malformed files.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "collage/npz.h"
#include "io/io_test_util.h"

namespace collage {
namespace {

using testing::as_string;
using testing::read_bytes;
using testing::ScratchDir;
using testing::write_bytes;

// What np.save writes for np.arange(6, dtype=np.float32).reshape(2, 3), np.array(-5) (int64)
// and np.zeros((0,), bool), generated with numpy 2.4.
// 152 bytes
const unsigned char kNumpyF32x2x3[] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x20,
    0x33, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40,
    0x00, 0x00, 0x80, 0x40, 0x00, 0x00, 0xa0, 0x40,
};
// 136 bytes
const unsigned char kNumpyI64Scalar[] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x69, 0x38, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x29, 0x2c, 0x20,
    0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};
// 128 bytes
const unsigned char kNumpyBoolEmpty[] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x7c, 0x62, 0x31, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x30, 0x2c, 0x29,
    0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
};

std::string npy_with_header(std::string_view dict, std::string_view data, int major = 1) {
  std::string h(dict);
  h += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) out += static_cast<char>((h.size() >> (8 * i)) & 0xFF);
  return out + h + std::string(data);
}

absl::StatusOr<Tensor> read_npy_bytes(const ScratchDir& dir, const std::string& bytes) {
  write_bytes(dir / "a.npy", bytes);
  return read_npy(dir / "a.npy");
}

const std::vector<Shape> kShapesByRank = {{},        {3},          {2, 3},
                                          {2, 1, 3}, {1, 2, 3, 2}, {2, 1, 2, 1, 3}};

TEST_CASE("npy: every dtype and rank 0..5 round-trips", "[io]") {
  ScratchDir dir;
  for (DType dt : testing::kNpyDTypes) {
    for (const Shape& shape : kShapesByRank) {
      INFO(dtype_name(dt) << " " << shape_to_string(shape));
      Tensor t = testing::pattern_tensor(dt, shape, 3);
      REQUIRE(write_npy(dir / "t.npy", t).ok());
      auto back = read_npy(dir / "t.npy");
      REQUIRE(back.ok());
      CHECK(back->identical(t));
    }
  }
}

TEST_CASE("npy: arrays with a zero dimension round-trip", "[io]") {
  ScratchDir dir;
  for (const Shape& shape : {Shape{0}, Shape{2, 0, 3}}) {
    Tensor t(DType::f32, shape);
    REQUIRE(write_npy(dir / "z.npy", t).ok());
    auto back = read_npy(dir / "z.npy");
    REQUIRE(back.ok());
    CHECK(back->shape() == shape);
  }
}

TEST_CASE("npy: the writer produces np.save's exact bytes", "[io]") {
  ScratchDir dir;
  const float v[] = {0, 1, 2, 3, 4, 5};
  REQUIRE(write_npy(dir / "f.npy", Tensor::from_f32({2, 3}, v)).ok());
  CHECK(read_bytes(dir / "f.npy") ==
        std::vector<uint8_t>(std::begin(kNumpyF32x2x3), std::end(kNumpyF32x2x3)));
  REQUIRE(write_npy(dir / "i.npy", Tensor::scalar_i64(-5)).ok());
  CHECK(read_bytes(dir / "i.npy") ==
        std::vector<uint8_t>(std::begin(kNumpyI64Scalar), std::end(kNumpyI64Scalar)));
  REQUIRE(write_npy(dir / "b.npy", Tensor(DType::boolean, {0})).ok());
  CHECK(read_bytes(dir / "b.npy") ==
        std::vector<uint8_t>(std::begin(kNumpyBoolEmpty), std::end(kNumpyBoolEmpty)));
}

TEST_CASE("npy: reads files numpy wrote", "[io]") {
  ScratchDir dir;
  auto f = read_npy_bytes(dir, as_string(kNumpyF32x2x3));
  REQUIRE(f.ok());
  CHECK(f->type() == TensorType{DType::f32, {2, 3}});
  CHECK(f->data<float>()[5] == 5.0f);
  auto i = read_npy_bytes(dir, as_string(kNumpyI64Scalar));
  REQUIRE(i.ok());
  CHECK(i->type() == TensorType{DType::i64, {}});
  CHECK(i->data<int64_t>()[0] == -5);
  auto b = read_npy_bytes(dir, as_string(kNumpyBoolEmpty));
  REQUIRE(b.ok());
  CHECK(b->type() == TensorType{DType::boolean, {0}});
}

TEST_CASE("npy: accepts the header spellings numpy can produce", "[io]") {
  ScratchDir dir;
  const std::string data(12, '\x01');
  struct Variant {
    std::string dict;
    int major;
    TensorType type;
  };
  const Variant variants[] = {
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 2, {DType::i32, {3}}},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 3, {DType::i32, {3}}},
      {"{'shape': (3L,), 'fortran_order': False, 'descr': '<f4'}", 1, {DType::f32, {3}}},
      {"{\"descr\": \"<f2\", \"fortran_order\": False, \"shape\": (2, 3)}",
       1,
       {DType::f16, {2, 3}}},
      {"{'descr':'|i1','fortran_order':False,'shape':(12,)}", 1, {DType::i8, {12}}},
      {"{'descr': '<i1', 'fortran_order': False, 'shape': (2, 6), }", 1, {DType::i8, {2, 6}}},
      {"{'descr': '>i1', 'fortran_order': False, 'shape': (12,), }", 1, {DType::i8, {12}}},
      {"{'descr': '=i8', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1), }",
       1,
       {DType::i64, {1, 1, 1, 1, 1, 1, 1, 1}}},
      {"{'descr': 'f4', 'fortran_order': False, 'shape': (1, 3), }", 1, {DType::f32, {1, 3}}},
      {"{'descr': '|b1', 'fortran_order': False, 'shape': (12,), }", 1, {DType::boolean, {12}}},
  };
  for (const Variant& v : variants) {
    INFO(v.dict << " version " << v.major);
    auto t = read_npy_bytes(dir, npy_with_header(v.dict, data.substr(0, v.type.bytes()), v.major));
    REQUIRE(t.ok());
    CHECK(t->type() == v.type);
  }
}

TEST_CASE("npy: bool bytes other than 0 and 1 read as true", "[io]") {
  ScratchDir dir;
  auto t = read_npy_bytes(
      dir, npy_with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                           std::string("\x00\x02\xff", 3)));
  REQUIRE(t.ok());
  CHECK(t->data<uint8_t>()[0] == 0);
  CHECK(t->data<uint8_t>()[1] == 1);
  CHECK(t->data<uint8_t>()[2] == 1);
}

TEST_CASE("npy: unsupported layouts and types are refused with a reason", "[io]") {
  ScratchDir dir;
  struct Refused {
    std::string dict;
    std::string message;
  };
  const Refused cases[] = {
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", "Fortran-order"},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", "big-endian dtype '>f4'"},
      {"{'descr': '>i8', 'fortran_order': False, 'shape': (2,), }", "big-endian"},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype '<c8'"},
      {"{'descr': '<m8', 'fortran_order': False, 'shape': (8,), }", "unsupported dtype '<m8'"},
      {"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", "dtype '|O' holds pickled"},
      {"{'descr': '|f4', 'fortran_order': False, 'shape': (4,), }", "lacks a byte order"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }", "structured"},
  };
  for (const Refused& r : cases) {
    INFO(r.dict);
    auto t = read_npy_bytes(dir, npy_with_header(r.dict, std::string(16, '\0')));
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(t.status().message()), Catch::Contains(r.message));
    CHECK_THAT(std::string(t.status().message()), Catch::Contains("a.npy"));
  }
}

TEST_CASE("npy: malformed headers are errors", "[io]") {
  ScratchDir dir;
  const std::string data(24, '\0');
  const std::string bad_dicts[] = {
      "",
      "{",
      "{'descr': '<f4', 'fortran_order': False}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'extra': 1}",
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,)}",
      "{'descr': '<f4', 'fortran_order': No, 'shape': (6,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': 6}",
      "{'descr': '<f4, 'fortran_order': False, 'shape': (6,)}",
      "{'descr': '<f4' 'fortran_order': False, 'shape': (6,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (6,)} trailing",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (7,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (5,)}",
      "{'descr': '<f\\x34', 'fortran_order': False, 'shape': (6,)}",
  };
  for (const std::string& d : bad_dicts) {
    INFO(d);
    auto t = read_npy_bytes(dir, npy_with_header(d, data));
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(t.status().message()), Catch::Contains("a.npy"));
  }
}

TEST_CASE("npy: bad magic, version and header length are errors", "[io]") {
  ScratchDir dir;
  std::string good = as_string(kNumpyF32x2x3);
  std::string wrong_magic = good;
  wrong_magic[1] = 'M';
  std::string version4 = good;
  version4[6] = 4;
  std::string long_header = good;
  long_header[8] = '\xff';
  for (const std::string& bytes : {wrong_magic, version4, long_header, std::string("PK\3\4")}) {
    auto t = read_npy_bytes(dir, bytes);
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("npy: every truncation of a valid file is an error", "[io]") {
  ScratchDir dir;
  const std::string good = as_string(kNumpyF32x2x3);
  for (size_t n = 0; n < good.size(); ++n) {
    INFO("first " << n << " bytes");
    auto t = read_npy_bytes(dir, good.substr(0, n));
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
  }
  auto extra = read_npy_bytes(dir, good + "x");
  REQUIRE_FALSE(extra.ok());
  CHECK_THAT(std::string(extra.status().message()), Catch::Contains("1 unexpected bytes"));
}

TEST_CASE("npy: a missing file or a folder is an error naming the path", "[io]") {
  ScratchDir dir;
  auto missing = read_npy(dir / "missing.npy");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(missing.status().message()), Catch::Contains("missing.npy"));
  auto folder = read_npy(dir.path());
  REQUIRE_FALSE(folder.ok());
  CHECK(folder.status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("npy: tensors numpy cannot hold are refused on write", "[io]") {
  ScratchDir dir;
  absl::Status bf16 = write_npy(dir / "b.npy", Tensor(DType::bf16, {2}));
  CHECK(bf16.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(bf16.message()), Catch::Contains("bf16 has no NumPy equivalent"));
  CHECK(write_npy(dir / "e.npy", Tensor()).code() == absl::StatusCode::kInvalidArgument);
  CHECK(dir.entries().empty());
}

TEST_CASE("npy: a write into a missing folder fails and leaves nothing", "[io]") {
  ScratchDir dir;
  absl::Status s = write_npy(dir / "no" / "t.npy", Tensor::scalar_f32(1));
  CHECK(s.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(s.message()), Catch::Contains("t.npy"));
  CHECK(dir.entries().empty());
}

}  // namespace
}  // namespace collage
