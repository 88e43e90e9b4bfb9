// Running with wrong tensors: counts, shapes, dtypes, layouts, devices and null pointers give
// INVALID_ARGUMENT naming the tensor; the module stays usable.
#include <catch2/catch.hpp>

#include "common/test_util.h"
#include "runtime/runtime_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

// Runs the MLP artifact with input/output descriptors edited by `edit`; returns the message.
std::string run_message(const collage_module_t* m, void (*edit)(DLTensor& in, DLTensor& out),
                        int32_t num_inputs = 1, int32_t num_outputs = 1) {
  Tensor x = random_f32({4, 16}, 3);
  Tensor y(DType::f32, {4, 10});
  DLTensor in = dl_view(x), out = dl_view(y);
  int64_t in_shape[4] = {4, 16, 1, 1}, out_shape[4] = {4, 10, 1, 1};
  in.shape = in_shape;
  out.shape = out_shape;
  if (edit) edit(in, out);
  collage_status_t* s = collage_module_run(m, &in, num_inputs, &out, num_outputs);
  CHECK(collage_status_code(s) == (s ? COLLAGE_STATUS_INVALID_ARGUMENT : COLLAGE_STATUS_OK));
  return take_message(s);
}

}  // namespace

TEST_CASE("run errors: wrong tensors are named", "[runtime][run]") {
  Context ctx;
  ModulePtr m = load_bytes(backend_artifact(mlp_graph(ctx), "eigen"), nullptr, nullptr, nullptr);
  REQUIRE(m);
  const collage_module_t* mod = m.get();
  CHECK(run_message(mod, nullptr) == "");
  CHECK(run_message(mod, nullptr, 2, 1) ==
        "run: the model takes 1 inputs and 1 outputs, got 2 and 1");
  CHECK(run_message(mod, [](DLTensor& in, DLTensor&) { in.shape[1] = 15; }) ==
        "input 0 'x': expected f32[4x16], got f32[4x15]");
  CHECK(run_message(mod, [](DLTensor& in, DLTensor&) { in.ndim = 3; }) ==
        "input 0 'x': expected f32[4x16], got f32[4x16x1]");
  CHECK(run_message(mod, [](DLTensor& in, DLTensor&) {
          in.dtype = {kDLInt, 64, 1};
        }) == "input 0 'x': expected f32[4x16], got i64[4x16]");
  CHECK(run_message(mod, [](DLTensor& in, DLTensor&) {
          in.dtype = {kDLFloat, 32, 4};
        }) == "input 0 'x': expected f32[4x16], got dlpack(code 2, bits 32, lanes 4)[4x16]");
  CHECK(run_message(mod, [](DLTensor&, DLTensor& out) { out.shape[0] = 5; }) ==
        "output 0 'logits': expected f32[4x10], got f32[5x10]");
  CHECK(run_message(mod, [](DLTensor& in, DLTensor&) {
          static int64_t strides[2] = {1, 4};
          in.strides = strides;
        }) == "input 0 'x': not dense row-major (strides must be null or compact)");
  CHECK(run_message(mod, [](DLTensor& in, DLTensor&) {
          static int64_t strides[2] = {16, 1};
          in.strides = strides;
        }) == "");
  CHECK(run_message(mod, [](DLTensor& in, DLTensor&) { in.data = nullptr; }) ==
        "input 0 'x': no data pointer");
  CHECK(run_message(mod, [](DLTensor& in, DLTensor&) { in.device.device_type = kDLCUDA; }) ==
        "input 0 'x': device type 2, only CPU memory is supported");
  CHECK(run_message(mod, [](DLTensor& in, DLTensor&) { in.shape = nullptr; }) ==
        "input 0 'x': expected f32[4x16], got a tensor without a shape");
  collage_status_t* s = collage_module_run(mod, nullptr, 1, nullptr, 1);
  CHECK(take_message(s) == "run: null tensor array");
  s = collage_module_run(nullptr, nullptr, 0, nullptr, 0);
  CHECK(take_message(s) == "collage_module_run: NULL module");
  // Still fine afterwards.
  CHECK(run_module(mod, {random_f32({4, 16}, 1)}).size() == 1);
}

TEST_CASE("run errors: byte_offset is honoured", "[runtime][run]") {
  Context ctx;
  ModulePtr m = load_bytes(backend_artifact(mlp_graph(ctx), "eigen"), nullptr, nullptr, nullptr);
  REQUIRE(m);
  const Tensor x = random_f32({4, 16}, 8);
  const std::vector<Tensor> expected = run_module(m.get(), {x});
  REQUIRE(expected.size() == 1);
  Tensor padded(DType::f32, {4 * 16 + 16});
  std::memcpy(padded.data<float>() + 16, x.raw(), x.bytes());
  Tensor y(DType::f32, {4, 10});
  DLTensor in = dl_view(x), out = dl_view(y);
  in.data = padded.raw();
  in.byte_offset = 16 * sizeof(float);
  REQUIRE(take_message(collage_module_run(m.get(), &in, 1, &out, 1)).empty());
  CHECK(y.identical(expected[0]));
}
