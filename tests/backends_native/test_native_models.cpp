// The width-reduced test models placed with single:native, compiled and run by the in-process
// executor, against run_reference on the same graph. dcgan_small (ConvTranspose, BatchNorm, Relu,
// Tanh) and every other small model run on native alone (conv/dense from the TE library).
#include <catch2/catch.hpp>

#include "collage/backends/native.h"
#include "common/single_backend_model.h"

using namespace collage;

namespace {

void check_model(const std::string& name) {
  // Deep networks add up summation-order differences (blocked reductions): 3e-4 of the scale.
  auto share = testing::check_single_backend_model(name, kNativeBackend, register_native_backend,
                                                   3e-4);
  if (share) CHECK(share->on_backend == share->total);
}

}  // namespace

TEST_CASE("native models: dcgan_small", "[native][models]") {
  check_model("dcgan_small");
}
TEST_CASE("native models: bert_small", "[native][models]") {
  check_model("bert_small");
}
TEST_CASE("native models: resnet50_small", "[native][models]") {
  check_model("resnet50_small");
}
TEST_CASE("native models: mobilenetv2_small", "[native][models]") {
  check_model("mobilenetv2_small");
}
TEST_CASE("native models: resnext50_small", "[native][models]") {
  check_model("resnext50_small");
}
TEST_CASE("native models: googlenet_small", "[native][models]") {
  check_model("googlenet_small");
}
TEST_CASE("native models: inceptionv3_small", "[native][models]") {
  check_model("inceptionv3_small");
}
TEST_CASE("native models: squeezenet_small", "[native][models]") {
  check_model("squeezenet_small");
}
