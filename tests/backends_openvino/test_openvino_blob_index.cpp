// BlobIndex (runtime/modules/openvino/blob_index.h), which finds a region's weight constants in
// the blob OpenVINO exported: every piece found where it lies whatever its alignment, the first
// occurrence at or after the search's start preferred, missing pieces reported missing.
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "blob_index.h"

using collage::rt_openvino::BlobIndex;

namespace {

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

}  // namespace

TEST_CASE("openvino blob index: pieces are found at any offset", "[openvino][record]") {
  const std::string blob = random_bytes(1 << 20, 1);
  const BlobIndex index(blob, 1024);
  std::mt19937 rng(2);
  for (int i = 0; i < 200; ++i) {
    const size_t size = 1024 + rng() % 8000;
    const size_t at = rng() % (blob.size() - size + 1);
    INFO("piece of " << size << " bytes at " << at);
    CHECK(index.find(std::string_view(blob).substr(at, size), 0) == at);
    CHECK(index.find(std::string_view(blob).substr(at, size), blob.size()) == at);
  }
  // At the very start and end of the blob, and all of it.
  CHECK(index.find(std::string_view(blob).substr(0, 1024), 0) == 0);
  CHECK(index.find(std::string_view(blob).substr(blob.size() - 1025), 7) == blob.size() - 1025);
  CHECK(index.find(blob, 0) == 0);
}

TEST_CASE("openvino blob index: pieces the blob does not hold are missing", "[openvino][record]") {
  const std::string blob = random_bytes(1 << 18, 3);
  const BlobIndex index(blob, 1024);
  CHECK(index.find(random_bytes(4096, 4), 0) == std::string_view::npos);
  // All but its last byte in the blob.
  std::string almost = blob.substr(5000, 3000);
  almost.back() = static_cast<char>(almost.back() ^ 1);
  CHECK(index.find(almost, 0) == std::string_view::npos);
  CHECK(index.find(blob + "x", 0) == std::string_view::npos);
}

TEST_CASE("openvino blob index: the first occurrence from the start is preferred",
          "[openvino][record]") {
  const std::string piece = random_bytes(3000, 5);
  const std::string blob =
      random_bytes(10001, 6) + piece + random_bytes(20003, 7) + piece + random_bytes(999, 8);
  const size_t first = 10001, second = 10001 + 3000 + 20003;
  const BlobIndex index(blob, 1024);
  CHECK(index.find(piece, 0) == first);
  CHECK(index.find(piece, first) == first);
  CHECK(index.find(piece, first + 1) == second);
  CHECK(index.find(piece, second + 1) == first);  // none after: the first before
}

TEST_CASE("openvino blob index: repeated bytes and short pieces", "[openvino][record]") {
  const std::string blob =
      random_bytes(5000, 9) + std::string(1 << 16, '\0') + random_bytes(5000, 10);
  const BlobIndex index(blob, 1024);
  // Zeros: found at one of their occurrences (the run's blocks exceed the candidates compared).
  const std::string zeros(4096, '\0');
  const size_t anywhere = index.find(zeros, 0);
  REQUIRE(anywhere != std::string_view::npos);
  CHECK(blob.compare(anywhere, zeros.size(), zeros) == 0);
  const size_t later = index.find(zeros, 6000);
  REQUIRE(later != std::string_view::npos);
  CHECK(later >= 6000);
  CHECK(blob.compare(later, zeros.size(), zeros) == 0);
  // Shorter than the index's minimum: found by a scan.
  CHECK(index.find(std::string_view(blob).substr(123, 40), 0) == 123);
  CHECK(index.find(std::string_view(blob).substr(123, 40), 124) == 123);
}
