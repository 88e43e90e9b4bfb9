// The small test models with every node the dnnl backend claims placed on dnnl (single:dnnl,
// the rest on the reference backend), run by the in-process executor and compared with the
// reference executor on the same optimised graph.
#include <catch2/catch.hpp>

#include "collage/backends/dnnl.h"
#include "common/single_backend_model.h"

using namespace collage;

namespace {

void check_model(const std::string& name) {
  auto share = testing::check_single_backend_model(name, kDnnlBackend, register_dnnl_backend, 1e-4);
  if (share) CHECK(share->on_backend > 0);
}

}  // namespace

TEST_CASE("dnnl models: single:dnnl placements match the reference", "[dnnl][models]") {
  for (const char* name : {"resnet50_small", "mobilenetv2_small", "resnext50_small",
                           "googlenet_small", "dcgan_small", "bert_small"}) {
    DYNAMIC_SECTION(name) {
      check_model(name);
    }
  }
}
