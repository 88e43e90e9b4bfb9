// Plans that are well-formed FlatBuffers but wrong: every id, offset and name is checked, the
// dataflow and the memory plan too; runtime modules that are missing or refuse a kernel.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>

#include "artifact_generated.h"
#include "common/test_util.h"
#include "format.h"
#include "runtime/runtime_test_util.h"

using namespace collage;
using namespace collage::testing;
namespace fb = collage::artifact::fb;

namespace {

// A plan built field by field. By default: tensors 0 = x (input 0), 1 = t (arena offset 0),
// 2 = y (output 0), all f32[8]; kernel 0 reads x and writes t, kernel 1 reads t and writes y.
// The kernel entries are not real Eigen kernels: these plans are refused before or at
// kernel creation.
struct PlanSpec {
  struct T {
    std::string name;
    std::vector<int64_t> shape{8};
    fb::Storage storage = fb::Storage::Arena;
    uint64_t location = 0;
    int32_t dtype = 0;
  };
  struct K {
    uint32_t module = 0;
    std::string entry = "elementwise";
    std::vector<uint32_t> args;
    uint32_t num_inputs = 1;
    int32_t tasks = 1;
  };
  std::vector<std::string> modules{"eigen"};
  std::vector<T> tensors{{"x", {8}, fb::Storage::Input, 0},
                         {"t", {8}, fb::Storage::Arena, 0},
                         {"y", {8}, fb::Storage::Output, 0}};
  std::vector<K> kernels{{0, "elementwise", {0, 1}}, {0, "elementwise", {1, 2}}};
  std::vector<uint32_t> inputs{0}, outputs{2};
  uint64_t arena_bytes = 64;
};

// The plan as an artifact; `native_code` (when not empty) becomes its native-code section.
std::string build(const PlanSpec& spec, const std::string& native_code = "") {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (const auto& t : spec.tensors)
    tensors.push_back(fb::CreateTensor(b, b.CreateString(t.name), t.dtype, b.CreateVector(t.shape),
                                       t.storage, t.location));
  std::vector<flatbuffers::Offset<fb::Kernel>> kernels;
  for (const auto& k : spec.kernels)
    kernels.push_back(fb::CreateKernel(b, b.CreateString("k"), b.CreateString("eigen"), k.module,
                                       b.CreateString(k.entry), 0, 0, b.CreateVector(k.args),
                                       k.num_inputs, k.tasks));
  auto plan = fb::CreatePlan(b, b.CreateString("handmade"), b.CreateVectorOfStrings(spec.modules),
                             b.CreateVector(tensors), 0, b.CreateVector(kernels),
                             b.CreateVector(spec.inputs), b.CreateVector(spec.outputs),
                             spec.arena_bytes, spec.arena_bytes);
  b.Finish(plan, fb::PlanIdentifier());
  std::vector<artifact::FileSection> sections = {
      {static_cast<uint32_t>(artifact::SectionKind::plan), 0,
       std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize())}};
  if (!native_code.empty())
    sections.push_back({static_cast<uint32_t>(artifact::SectionKind::native_code), 0, native_code});
  return artifact::assemble_artifact(sections);
}

std::string load_message(const PlanSpec& spec, int32_t expected_code) {
  int32_t code = -1;
  std::string message;
  ModulePtr m = load_bytes(build(spec), nullptr, &code, &message);
  INFO(message);
  CHECK(code == expected_code);
  const std::string prefix = "artifact in memory: ";
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

PlanSpec with(const std::function<void(PlanSpec&)>& edit) {
  PlanSpec s;
  edit(s);
  return s;
}

}  // namespace

TEST_CASE("plan checks: module names must be plain names", "[runtime][plan]") {
  CHECK(load_message(with([](PlanSpec& s) { s.modules = {"../../tmp/evil"}; }),
                     COLLAGE_STATUS_CORRUPT) ==
        "corrupt artifact plan: module 0: the name '../../tmp/evil' is not 1-64 letters, digits, "
        "'_' or '-'");
}

TEST_CASE("plan checks: ids and locations in range", "[runtime][plan]") {
  CHECK(load_message(with([](PlanSpec& s) {
                       s.kernels[1].args = {1, 7};
                     }),
                     COLLAGE_STATUS_CORRUPT) ==
        "corrupt artifact plan: kernel 1 (eigen: k): argument 1 is 7, beyond the 3 there are");
  CHECK(load_message(with([](PlanSpec& s) { s.kernels[0].module = 3; }), COLLAGE_STATUS_CORRUPT) ==
        "corrupt artifact plan: kernel 0 (eigen: k): module 3 does not exist");
  CHECK(
      load_message(with([](PlanSpec& s) { s.tensors[1].location = 64; }), COLLAGE_STATUS_CORRUPT) ==
      "corrupt artifact plan: tensor 1 't': arena offset 64 (32 bytes) outside the 64-byte "
      "arena or misaligned");
  CHECK(load_message(with([](PlanSpec& s) { s.tensors[1].dtype = 42; }), COLLAGE_STATUS_CORRUPT) ==
        "corrupt artifact plan: tensor 1 't': dtype 42");
  CHECK(
      load_message(with([](PlanSpec& s) { s.tensors[1].shape = {-3}; }), COLLAGE_STATUS_CORRUPT) ==
      "corrupt artifact plan: tensor 1 't': dimension 0 is -3");
  CHECK(load_message(with([](PlanSpec& s) {
                       s.tensors[1].shape = {1 << 30, 1 << 30};
                     }),
                     COLLAGE_STATUS_CORRUPT) ==
        "corrupt artifact plan: tensor 1 't': more than 2^44 bytes");
  CHECK(
      load_message(with([](PlanSpec& s) { s.tensors[2].location = 1; }), COLLAGE_STATUS_CORRUPT) ==
      "corrupt artifact plan: tensor 2 'y': not graph output 1");
  CHECK(load_message(with([](PlanSpec& s) { s.kernels[0].num_inputs = 2; }),
                     COLLAGE_STATUS_CORRUPT) ==
        "corrupt artifact plan: kernel 0 (eigen: k): 2 inputs of 2 arguments (no outputs)");
  CHECK(load_message(with([](PlanSpec& s) { s.kernels[0].tasks = 0; }), COLLAGE_STATUS_CORRUPT) ==
        "corrupt artifact plan: kernel 0 (eigen: k): task count 0");
  CHECK(load_message(with([](PlanSpec& s) {
                       s.outputs = {1};
                       s.tensors[2].storage = fb::Storage::Arena;
                     }),
                     COLLAGE_STATUS_CORRUPT) ==
        "corrupt artifact plan: graph output 0 lives in the arena");
}

TEST_CASE("plan checks: dataflow", "[runtime][plan]") {
  CHECK(load_message(with([](PlanSpec& s) { std::swap(s.kernels[0], s.kernels[1]); }),
                     COLLAGE_STATUS_CORRUPT) ==
        "corrupt artifact plan: kernel 0 (eigen: k) reads tensor 't' before anything writes it");
  CHECK(load_message(with([](PlanSpec& s) {
                       s.kernels[1].args = {1, 0};
                     }),
                     COLLAGE_STATUS_CORRUPT) ==
        "corrupt artifact plan: kernel 1 (eigen: k) writes tensor 'x', which is written already "
        "(or is an input or a constant)");
  CHECK(load_message(with([](PlanSpec& s) { s.kernels.pop_back(); }), COLLAGE_STATUS_CORRUPT) ==
        "corrupt artifact plan: graph output 0 'y' is written by no kernel");
}

TEST_CASE("plan checks: tensors alive together may not share arena bytes", "[runtime][plan]") {
  // t (offset 0) is still read by kernel 2 when kernel 1 writes u over it.
  PlanSpec s;
  s.tensors.push_back({"u", {8}, fb::Storage::Arena, 0});
  s.kernels = {{0, "elementwise", {0, 1}}, {0, "elementwise", {0, 3}}, {0, "x", {1, 3, 2}, 2}};
  CHECK(load_message(s, COLLAGE_STATUS_CORRUPT) ==
        "corrupt artifact plan: kernel 1 (eigen: k) writes tensor 'u' over the arena bytes of "
        "tensor 't', which is still in use");
  // Once t's last reader has run, u may take its place (v sits at 64 meanwhile).
  s.arena_bytes = 128;
  s.tensors.push_back({"v", {8}, fb::Storage::Arena, 64});
  s.kernels = {{0, "elementwise", {0, 1}},
               {0, "elementwise", {1, 4}},
               {0, "elementwise", {4, 3}},
               {0, "elementwise", {3, 2}}};
  CHECK(load_message(s, COLLAGE_STATUS_UNSUPPORTED).find("cannot create") != std::string::npos);
}

TEST_CASE("plan checks: a missing runtime module is named", "[runtime][plan]") {
  PlanSpec s;
  s.modules = {"nosuch"};
  collage_load_options_t options;
  collage_load_options_init(&options);
  options.module_dir = "/nonexistent-dir";
  int32_t code = -1;
  std::string message;
  ModulePtr m = load_bytes(build(s), &options, &code, &message);
  CHECK(code == COLLAGE_STATUS_NOT_FOUND);
  CHECK(message.rfind(
            "artifact in memory: runtime module 'nosuch' needed by the artifact was not "
            "found (libcollage_rt_nosuch.so; tried /nonexistent-dir/libcollage_rt_nosuch.so, ",
            0) == 0);
  CHECK(message.find("the default library path") != std::string::npos);
}

TEST_CASE("plan checks: a module refusing a kernel is reported with its reason",
          "[runtime][plan]") {
  std::string message = load_message(with([](PlanSpec& s) { s.kernels[0].entry = "bogus"; }),
                                     COLLAGE_STATUS_UNSUPPORTED);
  CHECK(message.rfind("kernel 0 (eigen: k): module 'eigen' cannot create 'bogus': ", 0) == 0);
}

TEST_CASE("plan checks: an arena size that is not a multiple of 64 runs", "[runtime][plan]") {
  // Found by fuzz/run_fuzzer.sh: the arena was allocated with aligned_alloc and a size that was
  // not a multiple of the alignment. x f32[1000] -> relu -> t (arena) -> add_one -> y.
  PlanSpec s;
  s.modules = {"native"};
  for (auto& t : s.tensors) t.shape = {1000};
  s.kernels = {{0, "collage_test_relu", {0, 1}}, {0, "collage_test_add_one", {1, 2}}};
  s.arena_bytes = 4003;
  int32_t code = -1;
  std::string message;
  ModulePtr m = load_bytes(build(s, read_file(COLLAGE_TEST_NATIVE_LIB)), nullptr, &code, &message);
  INFO(message);
  REQUIRE(m);
  const Tensor x = random_f32({1000}, 4);
  std::vector<Tensor> out = run_module(m.get(), {x}, &code, &message);
  REQUIRE(out.size() == 1);
  for (int64_t i = 0; i < 1000; ++i)
    REQUIRE(out[0].data<float>()[i] == std::max(x.data<float>()[i], 0.f) + 1);
}
