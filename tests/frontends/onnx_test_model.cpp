// Test helper implementation: ONNX model construction through the protobuf API.
#include "frontends/onnx_test_model.h"

#include <cctype>
#include <fstream>

#include <catch2/catch.hpp>

#include "frontends/onnx/onnx_tensor.h"

namespace collage::testing {
namespace {

onnx::AttributeProto& add_attr(onnx::NodeProto& n, const std::string& name,
                               onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(type);
  return a;
}

}  // namespace

OnnxModel::OnnxModel(int opset) {
  model_.set_ir_version(8);
  model_.set_producer_name("collage-tests");
  auto* id = model_.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  graph().set_name("test");
}

OnnxModel& OnnxModel::input(const std::string& name, int32_t elem_type,
                            const std::vector<int64_t>& dims) {
  std::vector<std::string> text;
  for (int64_t d : dims) text.push_back(std::to_string(d));
  return input_dims(name, elem_type, text);
}

OnnxModel& OnnxModel::input_dims(const std::string& name, int32_t elem_type,
                                 const std::vector<std::string>& dims) {
  auto* vi = graph().add_input();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (const std::string& d : dims) {
    auto* dim = shape->add_dim();
    if (d == "?") continue;
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
  return *this;
}

OnnxModel& OnnxModel::output(const std::string& name) {
  graph().add_output()->set_name(name);
  return *this;
}

onnx::TensorProto& OnnxModel::initializer(const std::string& name, const Tensor& t) {
  onnx::TensorProto& p = *graph().add_initializer();
  p = tensor_proto(name, t);
  return p;
}

onnx::NodeProto& OnnxModel::node(const std::string& op, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs,
                                 const std::string& name) {
  onnx::NodeProto& n = *graph().add_node();
  n.set_op_type(op);
  n.set_name(name);
  for (const auto& i : inputs) n.add_input(i);
  for (const auto& o : outputs) n.add_output(o);
  return n;
}

std::string OnnxModel::bytes() const { return model_.SerializeAsString(); }

std::filesystem::path OnnxModel::save(const std::filesystem::path& dir,
                                      const std::string& file) const {
  std::filesystem::create_directories(dir);
  std::filesystem::path p = dir / file;
  std::ofstream out(p, std::ios::binary);
  const std::string b = bytes();
  out.write(b.data(), static_cast<std::streamsize>(b.size()));
  return p;
}

absl::StatusOr<Graph> OnnxModel::import(const Context& ctx, const OnnxImportOptions& options,
                                        const std::filesystem::path& base_dir) const {
  const std::string b = bytes();
  return import_onnx_buffer(
      ctx, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(b.data()), b.size()),
      options, base_dir);
}

onnx::TensorProto tensor_proto(const std::string& name, const Tensor& t) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(onnx_import::onnx_type_of(t.dtype()));
  for (int64_t d : t.shape()) p.add_dims(d);
  if (t.dtype() == DType::str) {  // ONNX keeps strings in string_data
    for (int64_t i = 0; i < t.numel(); ++i) p.add_string_data(t.data<std::string>()[i]);
    return p;
  }
  p.set_raw_data(t.raw(), t.bytes());
  return p;
}

void attr_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
  add_attr(n, name, onnx::AttributeProto::INT).set_i(v);
}
void attr_float(onnx::NodeProto& n, const std::string& name, float v) {
  add_attr(n, name, onnx::AttributeProto::FLOAT).set_f(v);
}
void attr_string(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  add_attr(n, name, onnx::AttributeProto::STRING).set_s(v);
}
void attr_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto& a = add_attr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
}
void attr_floats(onnx::NodeProto& n, const std::string& name, const std::vector<float>& v) {
  auto& a = add_attr(n, name, onnx::AttributeProto::FLOATS);
  for (float x : v) a.add_floats(x);
}
void attr_tensor(onnx::NodeProto& n, const std::string& name, const Tensor& t) {
  *add_attr(n, name, onnx::AttributeProto::TENSOR).mutable_t() = tensor_proto("", t);
}
void attr_strings(onnx::NodeProto& n, const std::string& name, const std::vector<std::string>& v) {
  auto& a = add_attr(n, name, onnx::AttributeProto::STRINGS);
  for (const std::string& e : v) a.add_strings(e);
}

std::filesystem::path fresh_test_dir(const std::string& tag) {
  std::filesystem::path dir =
      std::filesystem::path(COLLAGE_BINARY_DIR) / "test-tmp" / "frontends" / tag;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void check_error(const absl::Status& s, absl::StatusCode code, const std::string& part) {
  INFO("status: " << s.ToString());
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == code);
  CHECK_THAT(std::string(s.message()), Catch::Contains(part));
}

}  // namespace collage::testing
