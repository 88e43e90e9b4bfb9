// Artifacts with string tensors (format version 3): StringConcat and StringEqual with a string
// constant on the strings module, loaded through the C API and run with collage_string_t inputs
// and outputs against the reference executor; a damaged string table, or strings in an older
// format version, refused as corrupt with the constant named.
#include <catch2/catch.hpp>
#include <cmath>

#include "collage/backends/strings.h"
#include "collage/executor.h"
#include "collage/ops/text.h"
#include "collage/reference.h"
#include "runtime/runtime_test_util.h"

namespace collage::testing {
namespace {

// words str[3], suffixes (a constant) -> joined = words + suffixes, same = words == suffixes.
Graph suffix_graph(const Context& ctx) {
  GraphBuilder b(ctx, "suffixes");
  const ValueId words = b.add_input("words", {DType::str, {3}});
  const ValueId suffixes = b.add_constant(
      "suffixes", Tensor::from_strings({3}, std::vector<std::string>{"a", "bb", "ccc"}));
  const ValueId joined = *b.add("StringConcat", {words, suffixes});
  const ValueId same = *b.add("StringEqual", {words, suffixes});
  b.set_value_name(joined, "joined");
  b.set_value_name(same, "same");
  b.add_output(joined);
  b.add_output(same);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

std::string strings_artifact(const Graph& g, ArtifactSummary* summary) {
  Context ctx;
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_strings_backend(backends).ok());
  Placement p;
  p.strategy = "test";
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n) {
    PlacedGroup& group = p.groups.emplace_back();
    group.nodes = NodeSet::of(g.nodes().size(), {n});
    group.backend = "strings";
  }
  auto bytes = compile_artifact(ctx, backends, g, p, {}, summary);
  INFO(bytes.status().ToString());
  REQUIRE(bytes.ok());
  return std::move(*bytes);
}

// Where the text of the suffixes' string table starts in `file`.
size_t table_text(const std::string& file) {
  const size_t at = file.find("abbccc");
  REQUIRE(at != std::string::npos);
  REQUIRE(file.find("abbccc", at + 1) == std::string::npos);
  return at;
}

TEST_CASE("an artifact runs string operators with a string constant", "[runtime][strings]") {
  Context ctx;
  const Graph g = suffix_graph(ctx);
  ArtifactSummary summary;
  const std::string bytes = strings_artifact(g, &summary);
  CHECK(summary.format_version == 3);
  CHECK(summary.modules == std::vector<std::string>{"strings"});
  auto m = load_bytes(bytes, nullptr, nullptr, nullptr);
  REQUIRE(m);
  collage_tensor_info_t info{};
  info.struct_size = sizeof info;
  REQUIRE(take_message(collage_module_input_info(m.get(), 0, &info)).empty());
  CHECK(info.dtype == COLLAGE_DTYPE_STRING);
  CHECK(info.bytes == 3 * sizeof(collage_string_t));
  CHECK(info.dl_dtype.code == kDLOpaqueHandle);
  const std::vector<Tensor> in = {
      Tensor::from_strings({3}, std::vector<std::string>{"a", "", "c\xc3\xa9"})};
  std::string message;
  const std::vector<Tensor> got = run_module_outputs(m.get(), in, &message);
  INFO(message);
  REQUIRE(got.size() == 2);
  auto want = run_reference(g, in);
  REQUIRE(want.ok());
  CHECK(got[0].identical((*want)[0]));
  CHECK(got[1].identical((*want)[1]));
  CHECK(got[0].data<std::string>()[2] == "c\xc3\xa9" "ccc");
  CHECK(got[1].to_int64_vector() == std::vector<int64_t>{1, 0, 0});

  // An input element with bytes but no pointer is the caller's error, named.
  collage_string_t bad[3] = {{"a", 1}, {nullptr, 2}, {"", 0}};
  DLTensor t = dl_view(in[0]);
  t.data = bad;
  collage_outputs_t* outs = nullptr;
  message = take_message(collage_module_run_outputs(m.get(), &t, 1, &outs));
  CHECK(outs == nullptr);
  CHECK_THAT(message, Catch::Contains("input 0 'words': string 1 has 2 bytes at a NULL pointer"));
}

TEST_CASE("a damaged string table is a corrupt artifact", "[runtime][strings]") {
  Context ctx;
  const std::string good = strings_artifact(suffix_graph(ctx), nullptr);
  const size_t text = table_text(good);
  // The table: offsets 0, 1, 3, 6 (u64), then "abbccc".
  REQUIRE(artifact::load_u64(reinterpret_cast<const uint8_t*>(good.data()) + text - 16) == 3);
  struct Damage {
    size_t offset_index;  // which of the 4 offsets
    uint64_t value;
    const char* message;
  };
  for (const Damage& d :
       {Damage{2, 7, "string table: string 1 ends at 7, after 1 (6 bytes of text)"},
        Damage{1, 4, "string table: string 1 ends at 3, after 4"},
        Damage{3, 5, "string table: the strings take 5 of its 6 bytes of text"},
        Damage{0, 1, "string table: offset 0 is 1"}}) {
    std::string file = good;
    auto* p = reinterpret_cast<uint8_t*>(file.data());
    artifact::store_u64(p + text - 32 + 8 * d.offset_index, d.value);
    rechecksum(file);
    int32_t code = 0;
    std::string message;
    CHECK_FALSE(load_bytes(file, nullptr, &code, &message));
    CHECK(code == COLLAGE_STATUS_CORRUPT);
    CHECK_THAT(message, Catch::Contains("constant 0") && Catch::Contains(d.message));
  }
  // Strings in an artifact that says it is of an older format version.
  std::string old = good;
  artifact::store_u32(reinterpret_cast<uint8_t*>(old.data()) + artifact::header::format_version,
                      2);
  rechecksum(old);
  int32_t code = 0;
  std::string message;
  CHECK_FALSE(load_bytes(old, nullptr, &code, &message));
  CHECK(code == COLLAGE_STATUS_CORRUPT);
  CHECK_THAT(message, Catch::Contains("a string constant in a format version 2 artifact"));
}

// The third key: NaN for floating-point keys (every NaN is one key), else 3.
float third(DType t) { return is_float(t) ? std::nanf("") : 3.f; }

// Three keys or values of `t`: strings, or the numbers 1, 2.5 (2 as an integer) and third(t).
Tensor labels(DType t, bool keys) {
  if (t == DType::str)
    return Tensor::from_strings({3}, keys ? std::vector<std::string>{"a", "b\xc3\xa9", ""}
                                          : std::vector<std::string>{"x", "", "z"});
  return Tensor::from_f32({3}, keys ? std::vector<float>{1, 2.5f, third(t)}
                                    : std::vector<float>{1, 7, 0.5f})
      .cast(t);
}

TEST_CASE("LabelEncoder over every key and value type in an artifact", "[runtime][strings]") {
  const DType types[] = {DType::str, DType::i64, DType::f32, DType::i32, DType::f64, DType::u8};
  for (DType kt : types) {
    for (DType vt : types) {
      INFO(dtype_name(kt) << " keys, " << dtype_name(vt) << " values");
      Context ctx;
      GraphBuilder b(ctx, "encode");
      const ValueId x = b.add_input("x", {kt, {5}});
      const Tensor fallback = vt == DType::str
                                  ? Tensor::from_strings({1}, std::vector<std::string>{"?"})
                                  : Tensor::from_f32({1}, std::vector<float>{42}).cast(vt);
      auto y = b.add("LabelEncoder", {x}, make_attrs<LabelEncoderAttrs>([&](auto& a) {
                       a.keys = labels(kt, true);
                       a.values = labels(vt, false);
                       a.default_value = fallback;
                     }));
      REQUIRE(y.ok());
      b.add_output(*y);
      auto g = b.finish();
      REQUIRE(g.ok());
      auto m = load_bytes(strings_artifact(*g, nullptr), nullptr, nullptr, nullptr);
      REQUIRE(m);
      // Every key, and a miss.
      Tensor in = kt == DType::str ? Tensor::from_strings(
                                         {5}, std::vector<std::string>{"", "a", "q", "b\xc3\xa9", "a"})
                                   : Tensor::from_f32({5}, std::vector<float>{third(kt), 1, 4, 2.5f, 1})
                                         .cast(kt);
      std::string message;
      const std::vector<Tensor> got = run_module_outputs(m.get(), {in}, &message);
      INFO(message);
      REQUIRE(got.size() == 1);
      auto want = run_reference(*g, {in});
      REQUIRE(want.ok());
      CHECK(got[0].identical((*want)[0]));
    }
  }
}

}  // namespace
}  // namespace collage::testing
