// Seed shrinking for the ONNX importer fuzzer (onnx_seeds.h).
#include "onnx_seeds.h"

#include <set>
#include <string>

namespace collage::fuzz {
namespace {

bool is_large(const onnx::TensorProto& t, size_t max_bytes) {
  return t.data_location() == onnx::TensorProto::EXTERNAL || t.ByteSizeLong() > max_bytes;
}

// Bytes of one element of the fixed-size ONNX types collage reads (8 for the rest: enough zero
// bytes for any of them).
size_t element_bytes(int32_t type) {
  switch (type) {
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
      return 1;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      return 2;
    case onnx::TensorProto::INT32:
      return 4;
    default:
      return 8;
  }
}

// A one-element tensor of `t`'s element type: 1/32 for FLOAT, 1 for INT64 (weights and index
// tables), zero bytes for the rest.
onnx::TensorProto fill_value(const onnx::TensorProto& t) {
  onnx::TensorProto v;
  v.set_data_type(t.data_type());
  v.add_dims(1);
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: {
      const float f = 0.03125f;
      v.set_raw_data(std::string(reinterpret_cast<const char*>(&f), sizeof f));
      break;
    }
    case onnx::TensorProto::INT64: {
      const int64_t i = 1;
      v.set_raw_data(std::string(reinterpret_cast<const char*>(&i), sizeof i));
      break;
    }
    default:
      v.set_raw_data(std::string(element_bytes(t.data_type()), '\0'));
  }
  return v;
}

}  // namespace

int shrink_initializers(onnx::ModelProto& model, size_t max_bytes) {
  onnx::GraphProto& g = *model.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> makers;
  std::set<std::string> replaced;
  for (onnx::TensorProto& t : *g.mutable_initializer()) {
    if (!is_large(t, max_bytes)) {
      *kept.Add() = std::move(t);
      continue;
    }
    onnx::TensorProto* shape = kept.Add();
    shape->set_name(t.name() + "/seed_shape");
    shape->set_data_type(onnx::TensorProto::INT64);
    shape->add_dims(t.dims_size());
    for (int64_t d : t.dims()) shape->add_int64_data(d);
    onnx::NodeProto* n = makers.Add();
    n->set_op_type("ConstantOfShape");
    n->set_name(t.name() + "/seed");
    n->add_input(shape->name());
    n->add_output(t.name());
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = fill_value(t);
    replaced.insert(t.name());
  }
  if (replaced.empty()) return 0;
  g.mutable_initializer()->Swap(&kept);
  // Old exporters list weights as graph inputs too; a computed value is no input.
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
  for (onnx::ValueInfoProto& vi : *g.mutable_input())
    if (!replaced.count(vi.name())) *inputs.Add() = std::move(vi);
  g.mutable_input()->Swap(&inputs);
  for (onnx::NodeProto& n : *g.mutable_node()) *makers.Add() = std::move(n);
  g.mutable_node()->Swap(&makers);
  return static_cast<int>(replaced.size());
}

}  // namespace collage::fuzz
