// Artifacts with OpenVINO regions, loaded and run through the runtime's C API: the exported blob
// imported when the OpenVINO build matches (no load notes, the in-process outputs); a record whose
// blob another build wrote compiled again from its IR (a load note says so), or refused under
// COLLAGE_LOAD_NO_RECOMPILE; a record without a blob compiled from its IR.
#include <catch2/catch.hpp>

#include "artifact/artifact.h"
#include "collage/backends/openvino.h"
#include "collage/executor.h"
#include "collage/ops.h"
#include "collage/reference.h"
#include "common/runtime_c_util.h"
#include "common/test_util.h"
#include "openvino_test_graphs.h"
#include "ov_module.h"
#include "ov_record.h"
#include "placement/baselines.h"

using namespace collage;
using namespace collage::testing;

namespace {

// x f32[1x8x12x12] -> Conv 3x3 (16 channels) -> Relu -> GlobalAveragePool -> Sigmoid, all on
// openvino, built into artifact kernels.
struct Fixture {
  Context ctx;
  Graph g;
  BackendRegistry backends;
  std::vector<ArtifactKernel> kernels;
  std::vector<Tensor> feed = {random_f32({1, 8, 12, 12}, 11)};
  std::vector<Tensor> in_process;

  Fixture() {
    GraphBuilder b(ctx, "convnet");
    ValueId x = b.add_input("x", {DType::f32, {1, 8, 12, 12}});
    ValueId w = b.add_constant("w", random_f32({16, 8, 3, 3}, 5));
    auto conv = b.add_node("Conv", {x, w}, make_attrs<ConvAttrs>([](auto& a) {
                             a.pads = {1, 1, 1, 1};
                           }));
    auto relu = b.add_node("Relu", {(*conv)[0]});
    auto pool = b.add_node("GlobalAveragePool", {(*relu)[0]});
    auto sig = b.add_node("Sigmoid", {(*pool)[0]});
    b.add_output((*sig)[0]);
    auto done = b.finish();
    REQUIRE(done.ok());
    g = *std::move(done);
    add_reference_and_openvino(backends);
    const Placement placement = one_openvino_region(g, backends);
    BuildOptions build;
    build.num_threads = 2;
    auto k = build_artifact_kernels(ctx, backends, g, placement, build);
    INFO(k.status().ToString());
    REQUIRE(k.ok());
    kernels = *std::move(k);
    REQUIRE(kernels.size() == 1);
    auto compiled = compile_placement(ctx, backends, g, placement, build);
    REQUIRE(compiled.ok());
    auto outs = compiled->run(feed);
    REQUIRE(outs.ok());
    in_process = *std::move(outs);
  }

  // The artifact of `kernels`, loaded with `flags`; null with `code`/`message` on failure.
  ModulePtr load(const std::vector<ArtifactKernel>& ks, uint32_t flags, int32_t* code,
                 std::string* message) const {
    auto bytes = serialize_artifact(g, ks);
    INFO(bytes.status().ToString());
    REQUIRE(bytes.ok());
    collage_load_options_t options;
    collage_load_options_init(&options);
    options.flags = flags;
    collage_module_t* m = nullptr;
    collage_status_t* s = collage_module_load_memory(bytes->data(), bytes->size(), &options, &m);
    *code = collage_status_code(s);
    *message = take_message(s);
    return ModulePtr(m);
  }

  void check_runs(const collage_module_t* m) const {
    auto outs = run_module(m, feed);
    REQUIRE(outs.size() == 1);
    CHECK(max_scaled_error(outs[0], in_process[0]) <= 1e-6);
    auto expected = run_reference(g, feed);
    REQUIRE(expected.ok());
    CHECK(max_scaled_error(outs[0], (*expected)[0]) <= 1e-5);
  }
};

// `bytes` as a 1-D i8 tensor that owns them.
Tensor bytes_tensor(std::vector<uint8_t> bytes) {
  auto owner = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  return Tensor::wrap(DType::i8, {static_cast<int64_t>(owner->size())}, owner->data(), owner);
}

// kernels with the region's header edited by `edit`.
std::vector<ArtifactKernel> with_header(std::vector<ArtifactKernel> ks,
                                        const std::function<void(rt_openvino::RecordHeader&,
                                                                 KernelRecord&)>& edit) {
  KernelRecord& r = ks[0].record;
  rt_openvino::RecordHeader h = rt_openvino::decode_header(r.params.data(), r.params.size());
  edit(h, r);
  r.params = rt_openvino::encode_header(h);
  return ks;
}

}  // namespace

TEST_CASE("openvino artifact: the exported blob is imported and runs as in process",
          "[openvino][artifact]") {
  Fixture f;
  const KernelRecord& r = f.kernels[0].record;
  CHECK(r.module == "openvino");
  REQUIRE(r.constants.size() == 3);  // IR, weights, blob
  const auto h = rt_openvino::decode_header(r.params.data(), r.params.size());
  CHECK(h.has_blob);
  CHECK(h.num_threads == 2);
  int32_t code = 0;
  std::string message;
  ModulePtr m = f.load(f.kernels, 0, &code, &message);
  INFO(message);
  REQUIRE(m);
  CHECK(std::string(collage_module_load_notes(m.get())).empty());
  f.check_runs(m.get());
}

TEST_CASE("openvino artifact: the weights the blob holds are not carried twice",
          "[openvino][artifact]") {
  Fixture f;
  const KernelRecord& r = f.kernels[0].record;
  const auto h = rt_openvino::decode_header(r.params.data(), r.params.size());
  const size_t residue = r.constants[rt_openvino::kWeights].type().bytes();
  size_t shared = 0, total = 0;
  for (const rt_openvino::WeightSegment& w : h.weights) {
    total += w.size;
    if (w.source == rt_openvino::kBlob) shared += w.size;
  }
  // The convolution's 16x8x3x3 f32 weights (4608 bytes) are found in the blob.
  CHECK(shared >= 16 * 8 * 3 * 3 * 4);
  CHECK(residue + shared == total);
  CHECK(residue < 1024);
}

TEST_CASE("openvino artifact: weight pieces outside their constant are an error",
          "[openvino][artifact]") {
  Fixture f;
  auto ks = with_header(f.kernels, [](auto& h, auto&) {
    h.weights.push_back({rt_openvino::kBlob, uint64_t{1} << 40, 16});
  });
  int32_t code = 0;
  std::string message;
  ModulePtr m = f.load(ks, 0, &code, &message);
  CHECK_FALSE(m);
  CHECK_THAT(message, Catch::Contains("module 'openvino'") &&
                          Catch::Contains("lies outside its constant"));
}

TEST_CASE("openvino records: weights shared with the blob",
          "[openvino][artifact]") {
  // bin: constants A (8 bytes at 0), B (4 at 8, too small to share), C (8 at 12); the blob holds
  // C and A, in that order, and not B.
  const std::string bin = "AAAAAAAABBBBCCCCCCCC";
  const std::string blob = "xxCCCCCCCCyyAAAAAAAAzz";
  std::string residue;
  auto pieces = rt_openvino::share_weights(bin, {{0, 8}, {8, 4}, {12, 8}}, blob, 8, &residue);
  REQUIRE(pieces.size() == 3);
  CHECK(residue == "BBBB");
  CHECK((pieces[0].source == rt_openvino::kBlob && pieces[0].offset == 12 && pieces[0].size == 8));
  CHECK((pieces[1].source == rt_openvino::kWeights && pieces[1].offset == 0 &&
         pieces[1].size == 4));
  CHECK((pieces[2].source == rt_openvino::kBlob && pieces[2].offset == 2 && pieces[2].size == 8));
  rt_openvino::RecordHeader h;
  h.has_blob = true;
  h.weights = pieces;
  auto back = rt_openvino::assemble_weights(
      h, reinterpret_cast<const uint8_t*>(residue.data()), residue.size(),
      reinterpret_cast<const uint8_t*>(blob.data()), blob.size());
  CHECK(std::string(back.begin(), back.end()) == bin);
  // Through the header's encoding.
  auto decoded = rt_openvino::decode_header(rt_openvino::encode_header(h).data(),
                                            rt_openvino::encode_header(h).size());
  REQUIRE(decoded.weights.size() == 3);
  CHECK(decoded.weights[2].offset == 2);
  CHECK(rt_openvino::constant_ranges(
            "<layer><data element_type=\"f32\" shape=\"2\" offset=\"12\" size=\"8\"/>"
            "<data axis=\"1\"/></layer>") ==
        std::vector<std::pair<uint64_t, uint64_t>>{{12, 8}});
}

TEST_CASE("openvino artifact: a blob of another OpenVINO build is compiled again, saying so",
          "[openvino][artifact]") {
  Fixture f;
  auto ks = with_header(f.kernels, [](auto& h, auto&) { h.built_with = "2020.1.0-fake-build"; });
  int32_t code = 0;
  std::string message;
  ModulePtr m = f.load(ks, 0, &code, &message);
  INFO(message);
  REQUIRE(m);
  const std::string notes = collage_module_load_notes(m.get());
  CHECK_THAT(notes, Catch::Contains("kernel 0 (openvino)") &&
                        Catch::Contains("compiled by OpenVINO 2020.1.0-fake-build") &&
                        Catch::Contains("compiled again from its model"));
  f.check_runs(m.get());
}

TEST_CASE("openvino artifact: COLLAGE_LOAD_NO_RECOMPILE refuses a blob of another build",
          "[openvino][artifact]") {
  Fixture f;
  auto ks = with_header(f.kernels, [](auto& h, auto&) { h.built_with = "2020.1.0-fake-build"; });
  int32_t code = 0;
  std::string message;
  ModulePtr m = f.load(ks, COLLAGE_LOAD_NO_RECOMPILE, &code, &message);
  CHECK_FALSE(m);
  CHECK(code == COLLAGE_STATUS_UNSUPPORTED);
  CHECK_THAT(message, Catch::Contains("module 'openvino'") &&
                          Catch::Contains("compiled by OpenVINO 2020.1.0-fake-build") &&
                          Catch::Contains("refused"));
  // The matching blob loads under the flag.
  ModulePtr ok = f.load(f.kernels, COLLAGE_LOAD_NO_RECOMPILE, &code, &message);
  CHECK(ok);
}

TEST_CASE("openvino artifact: a record without a blob is compiled from its IR",
          "[openvino][artifact]") {
  Fixture f;
  auto ks = with_header(f.kernels, [](auto& h, KernelRecord& r) {
    // All the weights in the record's own constant, as a record exported without a blob has.
    const Tensor& residue = r.constants[rt_openvino::kWeights];
    const Tensor& blob = r.constants[rt_openvino::kBlob];
    r.constants[rt_openvino::kWeights] = bytes_tensor(rt_openvino::assemble_weights(
        h, static_cast<const uint8_t*>(residue.raw()), residue.type().bytes(),
        static_cast<const uint8_t*>(blob.raw()), blob.type().bytes()));
    h.weights = {{rt_openvino::kWeights, 0, r.constants[rt_openvino::kWeights].type().bytes()}};
    h.has_blob = false;
    h.built_with.clear();
    r.constants.pop_back();
  });
  int32_t code = 0;
  std::string message;
  ModulePtr m = f.load(ks, 0, &code, &message);
  INFO(message);
  REQUIRE(m);
  CHECK_THAT(std::string(collage_module_load_notes(m.get())),
             Catch::Contains("carries no compiled blob"));
  f.check_runs(m.get());
}

TEST_CASE("openvino artifact: a record of format version 1 (all the weights in the IR) loads",
          "[openvino][artifact]") {
  Fixture f;
  auto ks = f.kernels;
  KernelRecord& r = ks[0].record;
  rt_openvino::RecordHeader h = rt_openvino::decode_header(r.params.data(), r.params.size());
  const Tensor& residue = r.constants[rt_openvino::kWeights];
  const Tensor& blob = r.constants[rt_openvino::kBlob];
  r.constants[rt_openvino::kWeights] = bytes_tensor(rt_openvino::assemble_weights(
      h, static_cast<const uint8_t*>(residue.raw()), residue.type().bytes(),
      static_cast<const uint8_t*>(blob.raw()), blob.type().bytes()));
  // Version 1's header: this one with version 1 and without the weight pieces (a count, then 20
  // bytes each).
  r.params.resize(r.params.size() - 4 - 20 * h.weights.size());
  r.params[4] = 1;
  for (const char* build : {"", "2020.1.0-fake-build"}) {
    KernelRecord& edited = ks[0].record;
    if (*build) {  // the blob of another build: the IR is compiled again, its weights in place
      h.built_with = build;
      h.weights.clear();
      std::vector<uint8_t> p = rt_openvino::encode_header(h);
      p.resize(p.size() - 4);
      p[4] = 1;
      edited.params = std::move(p);
    }
    int32_t code = 0;
    std::string message;
    ModulePtr m = f.load(ks, 0, &code, &message);
    INFO(message);
    REQUIRE(m);
    CHECK(std::string(collage_module_load_notes(m.get())).empty() == (*build == '\0'));
    f.check_runs(m.get());
  }
}

TEST_CASE("openvino artifact: a malformed header is an error naming the record",
          "[openvino][artifact]") {
  Fixture f;
  auto ks = f.kernels;
  ks[0].record.params.resize(6);
  int32_t code = 0;
  std::string message;
  ModulePtr m = f.load(ks, 0, &code, &message);
  CHECK_FALSE(m);
  CHECK(code == COLLAGE_STATUS_UNSUPPORTED);
  CHECK_THAT(message, Catch::Contains("openvino record parameters end inside the format version"));
}

TEST_CASE("openvino module: errors carry the call's status code and name what is wrong",
          "[openvino][module]") {
  const collage_rt_module_v1_t* m = rt_openvino::module_table();
  char err[256] = {0};
  void* instance = nullptr;
  CHECK(m->kernel_create(nullptr, &instance, err, sizeof err) == COLLAGE_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(std::string(err), Catch::Contains("null descriptor"));
  collage_kernel_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.entry = "conv";
  CHECK(m->kernel_create(&desc, &instance, err, sizeof err) == COLLAGE_STATUS_UNSUPPORTED);
  CHECK_THAT(std::string(err), Catch::Contains("unknown openvino kernel 'conv'"));
  CHECK(instance == nullptr);
  int not_a_region = 0;
  std::vector<void*> args(2, nullptr);
  CHECK(m->kernel_run(&not_a_region, args.data(), 1, 2, err, sizeof err) ==
        COLLAGE_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(std::string(err), Catch::Contains("task 1 of 2: openvino regions run as one task"));
  CHECK(m->kernel_run_threads(nullptr, args.data(), 0, 1, 1, err, sizeof err) ==
        COLLAGE_STATUS_INVALID_ARGUMENT);
  CHECK(m->kernel_prepare_threads(nullptr, 1, err, sizeof err) ==
        COLLAGE_STATUS_INVALID_ARGUMENT);
}
