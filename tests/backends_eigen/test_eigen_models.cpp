// The width-reduced test models placed with single:eigen (everything else on the reference
// backend), compiled and run by the in-process executor, against run_reference on the same graph.
#include <catch2/catch.hpp>

#include "collage/backends/eigen.h"
#include "common/single_backend_model.h"

using namespace collage;

namespace {

void check_model(const std::string& name) {
  auto share = testing::check_single_backend_model(name, kEigenBackend, register_eigen_backend,
                                                   1e-4);
  if (share) CHECK(share->on_backend > 0);
}

}  // namespace

TEST_CASE("eigen models: resnet50_small", "[eigen][models]") {
  check_model("resnet50_small");
}
TEST_CASE("eigen models: mobilenetv2_small", "[eigen][models]") {
  check_model("mobilenetv2_small");
}
TEST_CASE("eigen models: resnext50_small", "[eigen][models]") {
  check_model("resnext50_small");
}
TEST_CASE("eigen models: googlenet_small", "[eigen][models]") {
  check_model("googlenet_small");
}
TEST_CASE("eigen models: inceptionv3_small", "[eigen][models]") {
  check_model("inceptionv3_small");
}
TEST_CASE("eigen models: dcgan_small", "[eigen][models]") {
  check_model("dcgan_small");
}
TEST_CASE("eigen models: bert_small", "[eigen][models]") {
  check_model("bert_small");
}
