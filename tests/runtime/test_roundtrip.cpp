// Artifacts end to end: a model placed on Eigen, written, loaded through the C API from memory
// and from a file, run on DLPack tensors, against the reference executor and the in-process
// executor; tensor information, output copies, borrowed buffers and profiles.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "collage/backends/eigen.h"
#include "collage/executor.h"
#include "collage/ops/elementwise.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "placement/baselines.h"
#include "runtime/runtime_test_util.h"

using namespace collage;
using namespace collage::testing;
namespace fs = std::filesystem;

TEST_CASE("artifact: an Eigen MLP runs like the reference and the in-process executor",
          "[runtime]") {
  Context ctx;
  Graph g = mlp_graph(ctx);
  ArtifactSummary summary;
  const std::string bytes = backend_artifact(g, "eigen", "reference", &summary);
  CHECK(summary.modules == std::vector<std::string>{"eigen"});
  CHECK(summary.kernels >= 1);
  CHECK(summary.arena_bytes <= summary.unshared_bytes);
  CHECK(summary.file_bytes == bytes.size());

  int32_t code = -1;
  std::string message;
  ModulePtr m = load_bytes(bytes, nullptr, &code, &message);
  INFO(message);
  REQUIRE(m);
  CHECK(collage_module_arena_bytes(m.get()) == summary.arena_bytes);
  const Tensor x = random_f32({4, 16}, 11);
  std::vector<Tensor> out = run_module(m.get(), {x}, &code, &message);
  INFO(message);
  REQUIRE(out.size() == 1);
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  INFO(describe_mismatch(out[0], (*expected)[0]));
  CHECK(max_scaled_error(out[0], (*expected)[0]) <= 1e-5);

  // The same kernels in process give the same bits.
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_eigen_backend(backends).ok());
  auto placement = place_baseline("single:eigen", g, backends);
  REQUIRE(placement.ok());
  auto compiled = compile_placement(ctx, backends, g, *placement);
  REQUIRE(compiled.ok());
  auto in_process = compiled->run({x});
  REQUIRE(in_process.ok());
  CHECK(out[0].identical((*in_process)[0]));
}

TEST_CASE("artifact: a oneDNN MLP, and one mixing oneDNN and Eigen kernels", "[runtime]") {
  Context ctx;
  // The MLP, plus a ReduceSum of its logits (which oneDNN does not run; Eigen does).
  GraphBuilder b(ctx, "mixed");
  ValueId x = b.add_input("x", {DType::f32, {4, 16}});
  ValueId h = *b.add("MatMul", {x, b.add_constant("w1", random_f32({16, 32}, 1))});
  h = *b.add("Relu", {*b.add("Add", {h, b.add_constant("b1", random_f32({32}, 2))})});
  ValueId logits = *b.add("MatMul", {h, b.add_constant("w2", random_f32({32, 10}, 3))});
  ValueId sum =
      *b.add("ReduceSum", {logits}, make_attrs<ReduceAttrs>([](ReduceAttrs& a) { a.axes = {1}; }));
  b.add_output(logits);
  b.add_output(sum);
  auto mixed = b.finish();
  REQUIRE(mixed.ok());

  const Graph mlp = mlp_graph(ctx);
  for (const Graph* g : {&mlp, &*std::as_const(mixed)}) {
    const Tensor input = random_f32({4, 16}, 12);
    auto expected = run_reference(*g, {input});
    REQUIRE(expected.ok());
    ArtifactSummary summary;
    const std::string bytes = backend_artifact(*g, "dnnl", "eigen", &summary);
    INFO(g->name());
    CHECK(summary.modules == (g != &mlp ? std::vector<std::string>{"dnnl", "eigen"}
                                        : std::vector<std::string>{"dnnl"}));
    std::string message;
    ModulePtr m = load_bytes(bytes, nullptr, nullptr, &message);
    INFO(message);
    REQUIRE(m);
    std::vector<Tensor> out = run_module(m.get(), {input}, nullptr, &message);
    REQUIRE(out.size() == expected->size());
    for (size_t i = 0; i < out.size(); ++i) {
      INFO("output " << i << ": " << describe_mismatch(out[i], (*expected)[i]));
      CHECK(max_scaled_error(out[i], (*expected)[i]) <= 1e-5);
    }
  }
}

TEST_CASE("artifact: input and output information", "[runtime]") {
  Context ctx;
  ModulePtr m = load_bytes(backend_artifact(mlp_graph(ctx), "eigen"), nullptr, nullptr, nullptr);
  REQUIRE(m);
  REQUIRE(collage_module_num_inputs(m.get()) == 1);
  REQUIRE(collage_module_num_outputs(m.get()) == 1);
  collage_tensor_info_t info{};
  info.struct_size = sizeof info;
  REQUIRE(take_message(collage_module_input_info(m.get(), 0, &info)).empty());
  CHECK(std::string(info.name) == "x");
  CHECK(info.dtype == COLLAGE_DTYPE_F32);
  CHECK(info.dl_dtype.code == kDLFloat);
  CHECK(info.dl_dtype.bits == 32);
  CHECK(std::vector<int64_t>(info.shape, info.shape + info.ndim) == std::vector<int64_t>{4, 16});
  CHECK(info.bytes == 4 * 16 * 4);
  REQUIRE(take_message(collage_module_output_info(m.get(), 0, &info)).empty());
  CHECK(std::string(info.name) == "logits");
  CHECK(std::vector<int64_t>(info.shape, info.shape + info.ndim) == std::vector<int64_t>{4, 10});
  CHECK(take_message(collage_module_output_info(m.get(), 1, &info)) ==
        "output 1 out of range: the model has 1");
  // An older caller's smaller struct: only the fields it has are written.
  collage_tensor_info_t small{};
  small.struct_size = offsetof(collage_tensor_info_t, dtype);
  small.dtype = 99;
  REQUIRE(take_message(collage_module_input_info(m.get(), 0, &small)).empty());
  CHECK(std::string(small.name) == "x");
  CHECK(small.dtype == 99);
}

TEST_CASE("artifact: outputs that are inputs, constants or repeated are copied", "[runtime]") {
  Context ctx;
  Graph g = multi_output_graph(ctx);
  ModulePtr m = load_bytes(backend_artifact(g, "eigen"), nullptr, nullptr, nullptr);
  REQUIRE(m);
  const Tensor x = random_f32({4, 16}, 5);
  std::string message;
  std::vector<Tensor> out = run_module(m.get(), {x}, nullptr, &message);
  INFO(message);
  REQUIRE(out.size() == 5);
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  for (size_t i = 0; i < out.size(); ++i) {
    INFO("output " << i << ": " << describe_mismatch(out[i], (*expected)[i]));
    CHECK(max_scaled_error(out[i], (*expected)[i]) <= 1e-5);
  }
  CHECK(out[2].identical(out[0]));
  CHECK(out[3].identical(x));
}

TEST_CASE("artifact: scalar constants load, wherever their empty shape lies in the plan",
          "[runtime]") {
  // A scalar's shape is an empty vector, whose data pointer flatbuffers leaves misaligned at
  // about every other position; the reader once refused that as a "misaligned shape" (a tree
  // model compiled at batch 1 hit it). Names of growing length move it through the positions.
  for (int n = 1; n <= 8; ++n) {
    Context ctx;
    GraphBuilder b(ctx, "scalars");
    ValueId x = b.add_input("x", {DType::f32, {4, 16}});
    ValueId c = b.add_constant(std::string(n, 'c'), Tensor::from_f32({}, std::vector<float>{2.5f}));
    b.add_output(*b.add("Relu", {x}));
    b.add_output(c);
    auto g = b.finish();
    REQUIRE(g.ok());
    std::string message;
    ModulePtr m = load_bytes(backend_artifact(*g, "eigen"), nullptr, nullptr, &message);
    INFO("name length " << n << ": " << message);
    REQUIRE(m);
    std::vector<Tensor> out = run_module(m.get(), {random_f32({4, 16}, 3)}, nullptr, &message);
    REQUIRE(out.size() == 2);
    CHECK(out[1].shape().empty());
    CHECK(out[1].data<float>()[0] == 2.5f);
  }
}

TEST_CASE("artifact: loads from a file and writes a Chrome-trace profile", "[runtime]") {
  Context ctx;
  const fs::path dir = fs::temp_directory_path() / "collage_runtime_test";
  fs::create_directories(dir);
  const std::string path = (dir / "mlp.collage").string();
  write_file(path, backend_artifact(mlp_graph(ctx), "eigen"));
  collage_load_options_t options;
  collage_load_options_init(&options);
  options.num_threads = 2;
  collage_module_t* raw = nullptr;
  REQUIRE(take_message(collage_module_load_file(path.c_str(), &options, &raw)).empty());
  ModulePtr m(raw);
  REQUIRE(take_message(collage_module_set_profiling(m.get(), 1)).empty());
  for (int i = 0; i < 3; ++i) REQUIRE(run_module(m.get(), {random_f32({4, 16}, i)}).size() == 1);
  const std::string trace = (dir / "trace.json").string();
  REQUIRE(take_message(collage_module_write_profile(m.get(), trace.c_str())).empty());
  auto json = nlohmann::json::parse(read_file(trace));
  int runs = 0, kernels = 0;
  for (const auto& e : json["traceEvents"]) {
    CHECK(e["ph"] == "X");
    CHECK(e["dur"].get<double>() >= 0);
    if (e["cat"] == "run") {
      ++runs;
    } else {
      ++kernels;
      CHECK(e["cat"] == "eigen");
      CHECK(e["args"]["module"] == "eigen");
      CHECK(!e["name"].get<std::string>().empty());
    }
  }
  CHECK(runs == 3);
  CHECK(kernels >= 3);
  // Off: nothing more is recorded.
  REQUIRE(take_message(collage_module_set_profiling(m.get(), 0)).empty());
  REQUIRE(run_module(m.get(), {random_f32({4, 16}, 9)}).size() == 1);
  REQUIRE(take_message(collage_module_write_profile(m.get(), trace.c_str())).empty());
  CHECK(nlohmann::json::parse(read_file(trace))["traceEvents"].size() ==
        json["traceEvents"].size());
  fs::remove_all(dir);
}

TEST_CASE("artifact: a borrowed buffer is used in place and must be aligned", "[runtime]") {
  Context ctx;
  const std::string bytes = backend_artifact(mlp_graph(ctx), "eigen");
  std::vector<uint8_t> storage(bytes.size() + 128);
  uint8_t* aligned = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
  std::memcpy(aligned, bytes.data(), bytes.size());
  collage_load_options_t options;
  collage_load_options_init(&options);
  options.flags = COLLAGE_LOAD_BORROW_BUFFER;
  collage_module_t* raw = nullptr;
  REQUIRE(take_message(collage_module_load_memory(aligned, bytes.size(), &options, &raw)).empty());
  ModulePtr m(raw);
  CHECK(run_module(m.get(), {random_f32({4, 16}, 1)}).size() == 1);
  std::memmove(aligned + 1, aligned, bytes.size());
  collage_status_t* s = collage_module_load_memory(aligned + 1, bytes.size(), &options, &raw);
  CHECK(collage_status_code(s) == COLLAGE_STATUS_INVALID_ARGUMENT);
  CHECK(take_message(s) == "collage_module_load_memory: a borrowed buffer must be 64-byte aligned");
  CHECK(raw == nullptr);
}

TEST_CASE("artifact: version queries", "[runtime]") {
  CHECK(std::string(collage_runtime_version()) == COLLAGE_TEST_VERSION);
  CHECK(collage_runtime_abi_version() == COLLAGE_RUNTIME_ABI_VERSION);
  CHECK(collage_artifact_format_version() == 3);
  CHECK(collage_status_code(nullptr) == COLLAGE_STATUS_OK);
  CHECK(std::string(collage_status_message(nullptr)).empty());
  collage_status_free(nullptr);
  collage_module_release(nullptr);
  CHECK(collage_status_create(COLLAGE_STATUS_OK, "x") == nullptr);
  const DLDataType f16 = collage_dtype_to_dlpack(COLLAGE_DTYPE_F16);
  CHECK((f16.code == kDLFloat && f16.bits == 16 && f16.lanes == 1));
  const DLDataType unknown = collage_dtype_to_dlpack(42);
  CHECK((unknown.code == 0 && unknown.bits == 0 && unknown.lanes == 0));
}
