// Helpers of the runtime tests.
#include "runtime/runtime_test_util.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <sstream>

#include "collage/backends/dnnl.h"
#include "collage/backends/eigen.h"
#include "collage/executor.h"
#include "common/test_util.h"
#include "crc32c.h"
#include "format.h"
#include "placement/baselines.h"

namespace collage::testing {
namespace {

// x -> MatMul(w1) -> Add(b1) -> Relu -> MatMul(w2) -> Add(b2); returns {relu, logits}.
std::pair<ValueId, ValueId> add_mlp(GraphBuilder& b, ValueId x) {
  ValueId w1 = b.add_constant("w1", random_f32({16, 32}, 1));
  ValueId b1 = b.add_constant("b1", random_f32({32}, 2));
  ValueId w2 = b.add_constant("w2", random_f32({32, 10}, 3));
  ValueId b2 = b.add_constant("b2", random_f32({10}, 4));
  ValueId h = *b.add("MatMul", {x, w1});
  h = *b.add("Add", {h, b1});
  ValueId r = *b.add("Relu", {h});
  ValueId o = *b.add("MatMul", {r, w2});
  o = *b.add("Add", {o, b2});
  return {r, o};
}

}  // namespace

Graph mlp_graph(const Context& ctx) {
  GraphBuilder b(ctx, "mlp");
  ValueId x = b.add_input("x", {DType::f32, {4, 16}});
  ValueId logits = add_mlp(b, x).second;
  b.set_value_name(logits, "logits");
  b.add_output(logits);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

Graph multi_output_graph(const Context& ctx) {
  GraphBuilder b(ctx, "multi");
  ValueId x = b.add_input("x", {DType::f32, {4, 16}});
  auto [hidden, logits] = add_mlp(b, x);
  b.set_value_name(logits, "logits");
  b.set_value_name(hidden, "hidden");
  ValueId c = b.add_constant("scale", Tensor::from_f32({3}, std::vector<float>{1, 2, 3}));
  b.add_output(logits);
  b.add_output(hidden);
  b.add_output(logits);
  b.add_output(x);
  b.add_output(c);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

Placement one_group_per_node(const Graph& graph, std::string_view backend) {
  Placement p;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.nodes().size()); ++n)
    p.groups.push_back({NodeSet::of(graph.nodes().size(), {n}), std::string(backend)});
  return p;
}

std::string backend_artifact(const Graph& graph, std::string_view backend,
                             std::string_view fallback, ArtifactSummary* summary) {
  Context ctx;
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_eigen_backend(backends).ok());
  REQUIRE(register_dnnl_backend(backends).ok());
  BaselineOptions options;
  options.fallback = std::string(fallback);
  auto placement = place_single(graph, backends, backend, options);
  INFO(placement.status().ToString());
  REQUIRE(placement.ok());
  for (const PlacedGroup& group : placement->groups) REQUIRE(group.backend != "reference");
  auto bytes = compile_artifact(ctx, backends, graph, *placement, {}, summary);
  INFO(bytes.status().ToString());
  REQUIRE(bytes.ok());
  return std::move(*bytes);
}

ModulePtr load_bytes(const std::string& bytes, const collage_load_options_t* options, int32_t* code,
                     std::string* message) {
  collage_module_t* m = nullptr;
  collage_status_t* s = collage_module_load_memory(bytes.data(), bytes.size(), options, &m);
  if (code) *code = collage_status_code(s);
  if (message) *message = collage_status_message(s);
  collage_status_free(s);
  return ModulePtr(m);
}

std::vector<Tensor> run_outputs(const collage_module_t* m, const std::vector<Tensor>& inputs,
                                std::string* message) {
  std::vector<DLTensor> in;
  for (const Tensor& t : inputs) in.push_back(dl_view(t));
  collage_outputs_t* outs = nullptr;
  *message = take_message(
      collage_module_run_outputs(m, in.data(), static_cast<int32_t>(in.size()), &outs));
  std::vector<Tensor> result;
  for (int32_t i = 0; i < collage_outputs_count(outs); ++i) {
    DLTensor t{};
    REQUIRE(take_message(collage_outputs_get(outs, i, &t)).empty());
    const bool wide = t.dtype.bits == 64;
    const DType dtype = t.dtype.code == kDLFloat ? (wide ? DType::f64 : DType::f32)
                        : t.dtype.bits == 8      ? DType::boolean
                                                 : (wide ? DType::i64 : DType::i32);
    Tensor copy(dtype, Shape(t.shape, t.shape + t.ndim));
    if (copy.bytes()) std::memcpy(copy.raw(), t.data, copy.bytes());
    result.push_back(std::move(copy));
  }
  collage_outputs_release(outs);
  return result;
}

std::vector<artifact::FileSection> split_sections(const std::string& file) {
  using namespace artifact;
  const auto* p = reinterpret_cast<const uint8_t*>(file.data());
  std::vector<FileSection> sections;
  for (uint32_t i = 0; i < load_u32(p + header::section_count); ++i) {
    const uint8_t* e = p + kHeaderBytes + kSectionEntryBytes * i;
    sections.push_back({load_u32(e + entry::kind), load_u32(e + entry::flags),
                        file.substr(load_u64(e + entry::offset), load_u64(e + entry::size))});
  }
  return sections;
}

void rechecksum(std::string& file) {
  using namespace artifact;
  auto* p = reinterpret_cast<uint8_t*>(file.data());
  const uint32_t count = load_u32(p + header::section_count);
  for (uint32_t i = 0; i < count; ++i) {
    uint8_t* e = p + kHeaderBytes + kSectionEntryBytes * i;
    store_u32(e + entry::crc, crc32c(p + load_u64(e + entry::offset), load_u64(e + entry::size)));
  }
  const uint32_t header_size = load_u32(p + header::header_size);
  store_u32(p + header::header_crc, 0);
  store_u32(p + header::header_crc, crc32c(p, header_size));
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace collage::testing
