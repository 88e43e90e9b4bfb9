// .npy and .npz string arrays: str tensors written as NumPy unicode (U), U and S arrays read,
// object arrays and text that is not UTF-8 refused with a message saying what to do.
#include <catch2/catch.hpp>
#include <string>

#include "collage/npz.h"
#include "io/io_test_util.h"
#include "io/npy_format.h"
#include "io/npy_strings.h"

namespace collage {
namespace {

using testing::ScratchDir;

Tensor strings(Shape shape, std::vector<std::string> v) {
  return Tensor::from_strings(std::move(shape), v);
}

// A .npy image with header `descr` over `shape` followed by `data`.
std::string npy_image(std::string_view descr, const Shape& shape, const std::string& data) {
  auto header = io::encode_npy_header(descr, shape);
  REQUIRE(header.ok());
  return *header + data;
}

absl::StatusOr<Tensor> decode(const std::string& image) {
  return io::decode_npy({reinterpret_cast<const uint8_t*>(image.data()), image.size()});
}

TEST_CASE("npy strings: UTF-8 text round-trips through NumPy's unicode dtype", "[io]") {
  ScratchDir dir;
  const Tensor t = strings({2, 3}, {"caf\xc3\xa9", "", "\xe6\x97\xa5\xe6\x9c\xac",
                                    "a b", "\xf0\x9f\x99\x82!", "tab\there"});
  REQUIRE(write_npy(dir / "s.npy", t).ok());
  auto back = read_npy(dir / "s.npy");
  REQUIRE(back.ok());
  CHECK(back->identical(t));
  // The longest element, "tab\there", has 8 code points: "<U8", as np.asarray(a, dtype=str).
  auto encoded = io::encode_npy_strings(t);
  REQUIRE(encoded.ok());
  CHECK(encoded->descr == "<U8");
  CHECK(encoded->data.size() == 6 * 8 * 4);

  REQUIRE(write_npz(dir / "s.npz", {{"labels", t}, {"x", Tensor::scalar_f32(1)}}).ok());
  auto arrays = read_npz(dir / "s.npz");
  REQUIRE(arrays.ok());
  REQUIRE(arrays->size() == 2);
  CHECK((*arrays)[0].second.identical(t));
}

TEST_CASE("npy strings: U and S arrays as NumPy writes them", "[io]") {
  // np.array(["ab", "c"]) is "<U2": UTF-32 code units padded with NULs.
  std::string u;
  for (char32_t c : std::u32string(U"ab\u00e9\0", 4)) u.append(reinterpret_cast<char*>(&c), 4);
  auto t = decode(npy_image("<U2", {2}, u));
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  CHECK(t->identical(strings({2}, {"ab", "\xc3\xa9"})));
  // np.array([b"ab", b"xyz"]) is "|S3": bytes padded with NULs.
  auto s = decode(npy_image("|S3", {2}, std::string("ab\0xyz", 6)));
  REQUIRE(s.ok());
  CHECK(s->identical(strings({2}, {"ab", "xyz"})));
}

TEST_CASE("npy strings: object arrays, bad code points and non-UTF-8 text are errors", "[io]") {
  auto obj = decode(npy_image("|O", {1}, std::string(8, '\0')));
  CHECK(obj.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(obj.status().message()),
             Catch::Contains("pickled Python objects") && Catch::Contains("dtype=str"));
  const char32_t surrogate = 0xD800;
  auto bad = decode(npy_image("<U1", {1}, std::string(reinterpret_cast<const char*>(&surrogate), 4)));
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("no Unicode character"));
  auto short_data = decode(npy_image("<U2", {2}, std::string(12, 'a')));
  CHECK_THAT(std::string(short_data.status().message()), Catch::Contains("truncated"));

  ScratchDir dir;
  const Tensor latin1 = strings({1}, {"caf\xe9"});
  auto written = write_npz(dir / "bad.npz", {{"labels", latin1}});
  CHECK(written.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(written.message()),
             Catch::Contains("'labels'") && Catch::Contains("not UTF-8"));
}

}  // namespace
}  // namespace collage
