// Damaged artifacts: truncated, bit-flipped, or mutated and re-checksummed files, other format
// and ABI versions, unknown sections. Each gives a status with a clear message, never a crash.
#include <catch2/catch.hpp>
#include <random>

#include "format.h"
#include "runtime/runtime_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

const std::string& artifact_bytes() {
  static const std::string bytes = [] {
    Context ctx;
    return backend_artifact(multi_output_graph(ctx), "eigen");
  }();
  return bytes;
}

// Loads `bytes`; returns the status code, with the message in `message`.
int32_t load_code(const std::string& bytes, std::string* message = nullptr) {
  int32_t code = -1;
  std::string m;
  ModulePtr module = load_bytes(bytes, nullptr, &code, &m);
  if (message) *message = m;
  CHECK((module != nullptr) == (code == COLLAGE_STATUS_OK));
  return code;
}

}  // namespace

TEST_CASE("robustness: the intact artifact loads", "[runtime][robustness]") {
  std::string message;
  INFO(message);
  CHECK(load_code(artifact_bytes(), &message) == COLLAGE_STATUS_OK);
}

TEST_CASE("robustness: every truncation is refused", "[runtime][robustness]") {
  const std::string& bytes = artifact_bytes();
  std::string message;
  CHECK(load_code("", &message) == COLLAGE_STATUS_CORRUPT);
  CHECK(message ==
        "artifact in memory: not a collage artifact (no \"COLLAGE\" magic at the start)");
  CHECK(load_code(bytes.substr(0, 40), &message) == COLLAGE_STATUS_CORRUPT);
  CHECK(message ==
        "artifact in memory: truncated artifact: 40 bytes, less than the 64-byte header");
  for (size_t size = 64; size < bytes.size(); size += 1 + size / 50) {
    INFO("size " << size);
    CHECK(load_code(bytes.substr(0, size), &message) == COLLAGE_STATUS_CORRUPT);
  }
  CHECK(load_code(bytes.substr(0, bytes.size() - 1), &message) == COLLAGE_STATUS_CORRUPT);
  CHECK(message == "artifact in memory: truncated artifact: the header says " +
                       std::to_string(bytes.size()) + " bytes, the file has " +
                       std::to_string(bytes.size() - 1));
  CHECK(load_code(bytes + std::string(64, '\0'), &message) == COLLAGE_STATUS_CORRUPT);
  CHECK(message.find("trailing data") != std::string::npos);
}

TEST_CASE("robustness: a flipped bit anywhere is detected", "[runtime][robustness]") {
  const std::string& bytes = artifact_bytes();
  // Every bit of the header and the section table, then one bit of every 7th byte of the rest
  // (section contents and the zero padding between them).
  const size_t header = artifact::kHeaderBytes + 3 * artifact::kSectionEntryBytes;
  for (size_t pos = 0; pos < bytes.size(); pos += pos < header ? 1 : 7) {
    for (int bit = 0; bit < 8; ++bit) {
      if (pos >= header && bit != static_cast<int>(pos % 8)) continue;
      std::string damaged = bytes;
      damaged[pos] = static_cast<char>(damaged[pos] ^ (1 << bit));
      std::string message;
      const int32_t code = load_code(damaged, &message);
      INFO("byte " << pos << " bit " << bit << ": " << message);
      CHECK((code == COLLAGE_STATUS_CORRUPT || code == COLLAGE_STATUS_UNSUPPORTED));
    }
  }
}

TEST_CASE("robustness: mutated and re-checksummed plans never crash the loader",
          "[runtime][robustness]") {
  const std::string& bytes = artifact_bytes();
  const auto sections = split_sections(bytes);
  REQUIRE(sections[0].kind == static_cast<uint32_t>(artifact::SectionKind::plan));
  const size_t plan_offset = bytes.find(sections[0].bytes);
  const size_t plan_size = sections[0].bytes.size();
  std::mt19937 rng(1234);
  int loaded = 0, refused = 0;
  for (int round = 0; round < 1500; ++round) {
    std::string damaged = bytes;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = plan_offset + rng() % plan_size;
      damaged[pos] = static_cast<char>(rng() % 3 == 0 ? 0xFF : rng());
    }
    rechecksum(damaged);
    std::string message;
    const int32_t code = load_code(damaged, &message);
    INFO("round " << round << ": " << message);
    CHECK(code != COLLAGE_STATUS_INTERNAL);
    (code == COLLAGE_STATUS_OK ? loaded : refused)++;
  }
  WARN("mutated plans: " << loaded << " loaded, " << refused << " refused");
  CHECK(refused > 0);
}

TEST_CASE("robustness: other format and ABI versions are refused by name",
          "[runtime][robustness]") {
  std::string bytes = artifact_bytes();
  auto* p = reinterpret_cast<uint8_t*>(bytes.data());
  std::string message;
  artifact::store_u32(p + artifact::header::abi_version, 2);
  rechecksum(bytes);
  CHECK(load_code(bytes, &message) == COLLAGE_STATUS_UNSUPPORTED);
  CHECK(message ==
        "artifact in memory: artifact needs runtime module ABI version 2; this runtime provides "
        "version 1");
  artifact::store_u32(p + artifact::header::abi_version, 1);
  artifact::store_u32(p + artifact::header::format_version, 7);
  rechecksum(bytes);
  CHECK(load_code(bytes, &message) == COLLAGE_STATUS_UNSUPPORTED);
  CHECK(message ==
        "artifact in memory: artifact format version 7; this runtime reads versions 1 to 3");
}

TEST_CASE("robustness: unknown sections are skipped only when optional", "[runtime][robustness]") {
  auto sections = split_sections(artifact_bytes());
  sections.push_back({99, artifact::kSectionOptional, "future data"});
  std::string message;
  CHECK(load_code(artifact::assemble_artifact(sections), &message) == COLLAGE_STATUS_OK);
  sections.back().flags = 0;
  CHECK(load_code(artifact::assemble_artifact(sections), &message) == COLLAGE_STATUS_UNSUPPORTED);
  CHECK(message ==
        "artifact in memory: artifact section 2 (unknown) of kind 99 is required, and this "
        "runtime does not know it");
  sections.pop_back();
  sections.push_back(sections[0]);
  CHECK(load_code(artifact::assemble_artifact(sections), &message) == COLLAGE_STATUS_CORRUPT);
  CHECK(message == "artifact in memory: corrupt artifact: two plan sections");
}

TEST_CASE("robustness: a missing file is NOT_FOUND", "[runtime][robustness]") {
  collage_module_t* m = nullptr;
  collage_status_t* s = collage_module_load_file("/nonexistent/model.collage", nullptr, &m);
  CHECK(collage_status_code(s) == COLLAGE_STATUS_NOT_FOUND);
  CHECK(take_message(s) ==
        "cannot open artifact '/nonexistent/model.collage': No such file or directory");
  CHECK(m == nullptr);
  s = collage_module_load_file(nullptr, nullptr, &m);
  CHECK(collage_status_code(s) == COLLAGE_STATUS_INVALID_ARGUMENT);
  collage_status_free(s);
}
