// Structure-aware ONNX model mutations (see onnx_mutator.h).
#include "onnx_mutator.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

namespace collage::fuzz {
namespace {

// Operator types a node may be turned into: the default domain's, control flow, and a few that
// no version of ONNX has.
constexpr const char* kOpTypes[] = {
    "Abs", "Acos", "Add", "And", "ArgMax", "ArgMin", "AveragePool", "BatchNormalization",
    "Cast", "CastLike", "Ceil", "Celu", "Clip", "Compress", "Concat", "Constant",
    "ConstantOfShape", "Conv", "ConvTranspose", "Cos", "CumSum", "DepthToSpace", "Div",
    "Dropout", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand", "Flatten", "Floor", "Gather",
    "GatherElements", "GatherND", "Gelu", "Gemm", "GlobalAveragePool", "GlobalMaxPool",
    "Greater", "GreaterOrEqual", "GroupNormalization", "HardSigmoid", "HardSwish", "Identity",
    "If", "InstanceNormalization", "IsInf", "IsNaN", "LayerNormalization", "LeakyRelu", "Less",
    "LessOrEqual", "Log", "LogSoftmax", "Loop", "LRN", "MatMul", "Max", "MaxPool", "Mean",
    "Min", "Mod", "Mul", "Neg", "NonMaxSuppression", "NonZero", "Not", "OneHot", "Or", "Pad",
    "Pow", "PRelu", "Range", "Reciprocal", "ReduceL2", "ReduceMax", "ReduceMean", "ReduceMin",
    "ReduceProd", "ReduceSum", "Relu", "Reshape", "Resize", "Scan", "ScatterElements",
    "ScatterND", "Shape", "Sigmoid", "Sign", "Sin", "Size", "Slice", "Softmax", "Softplus",
    "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tanh", "Tile", "TopK",
    "Transpose", "Trilu", "Unique", "Unsqueeze", "Where", "Xor", "NoSuchOp"};

constexpr const char* kAttrNames[] = {
    "axis", "axes", "perm", "shape", "kernel_shape", "pads", "strides", "dilations", "group",
    "keepdims", "to", "mode", "alpha", "beta", "epsilon", "transA", "transB", "auto_pad",
    "ceil_mode", "count_include_pad", "split", "num_outputs", "starts", "ends", "value", "largest",
    "sorted", "upper", "exclusive", "reverse", "center_point_box", "sorted", "k", "allowzero",
    "coordinate_transformation_mode", "nearest_mode", "select_last_index", "noop_with_empty_axes",
    "stash_type", "output_padding", "output_shape", "blocksize", "batch_dims", "reduction",
    "then_branch", "else_branch", "body", "num_scan_inputs"};

constexpr const char* kStrings[] = {
    "", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "constant", "reflect", "edge", "wrap",
    "nearest", "linear", "cubic", "half_pixel", "align_corners", "asymmetric",
    "tf_crop_and_resize", "pytorch_half_pixel", "round_prefer_floor", "floor", "ceil", "DCR",
    "CRD", "none", "tanh", "add", "mul", "max", "min", "stretch"};

constexpr int64_t kInts[] = {-3, -2, -1, 0, 0, 1, 1, 1, 2, 2, 3, 4, 5, 7, 16, 1000,
                             std::numeric_limits<int64_t>::max(),
                             std::numeric_limits<int64_t>::min(),
                             std::numeric_limits<int32_t>::max()};

constexpr float kFloats[] = {0.f, 1.f, -1.f, 0.5f, 1e-5f, 1e30f, -1e30f,
                             std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN()};

template <typename T, size_t N>
const T& pick(const T (&values)[N], Rng& rng) {
  return values[std::uniform_int_distribution<size_t>(0, N - 1)(rng)];
}

int64_t below(Rng& rng, int64_t n) {
  return n <= 0 ? 0 : std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
}

bool one_in(Rng& rng, int n) { return below(rng, n) == 0; }

// A small integer most of the time, an edge value sometimes.
int64_t some_int(Rng& rng) {
  return one_in(rng, 3) ? pick(kInts, rng) : below(rng, 9) - 2;
}

// Every tensor name the graph defines or reads.
std::vector<std::string> tensor_names(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  for (const auto& vi : g.input()) names.push_back(vi.name());
  for (const auto& t : g.initializer()) names.push_back(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) names.push_back(o);
  return names;
}

void mutate_ints(google::protobuf::RepeatedField<int64_t>& v, Rng& rng) {
  switch (below(rng, 4)) {
    case 0:
      v.Add(some_int(rng));
      break;
    case 1:
      if (!v.empty()) v.RemoveLast();
      break;
    default:
      if (v.empty()) v.Add(some_int(rng));
      v.Set(static_cast<int>(below(rng, v.size())), some_int(rng));
  }
}

void mutate_tensor(onnx::TensorProto& t, Rng& rng) {
  switch (below(rng, 6)) {
    case 0:
      mutate_ints(*t.mutable_dims(), rng);
      break;
    case 1:
      t.set_data_type(static_cast<int32_t>(below(rng, 18)));
      break;
    case 2:  // shorten or lengthen the data
      if (t.has_raw_data()) {
        std::string* raw = t.mutable_raw_data();
        raw->resize(one_in(rng, 2) ? raw->size() / 2 : raw->size() + below(rng, 16));
      } else {
        t.add_int64_data(some_int(rng));
      }
      break;
    case 3:  // overwrite elements of small integer data: shape constants, axes, indices
      if (t.has_raw_data() && t.data_type() == onnx::TensorProto::INT64 &&
          t.raw_data().size() >= 8) {
        const int64_t v = some_int(rng);
        std::string* raw = t.mutable_raw_data();
        const size_t at = 8 * static_cast<size_t>(below(rng, static_cast<int64_t>(raw->size() / 8)));
        raw->replace(at, 8, reinterpret_cast<const char*>(&v), 8);
      } else if (t.int64_data_size() > 0) {
        t.set_int64_data(static_cast<int>(below(rng, t.int64_data_size())), some_int(rng));
      } else if (t.float_data_size() > 0) {
        t.set_float_data(static_cast<int>(below(rng, t.float_data_size())), pick(kFloats, rng));
      }
      break;
    case 4:  // external data that is not there, or a location escaping the model's folder
      t.set_data_location(onnx::TensorProto::EXTERNAL);
      if (t.external_data_size() == 0) {
        auto* kv = t.add_external_data();
        kv->set_key("location");
        kv->set_value(one_in(rng, 2) ? "../../etc/passwd" : "weights.bin");
      }
      break;
    default:
      t.clear_raw_data();
      t.clear_dims();
  }
}

void mutate_attribute(onnx::AttributeProto& a, Rng& rng) {
  using A = onnx::AttributeProto;
  if (one_in(rng, 8)) {  // a different kind than the operator expects
    a.set_type(static_cast<A::AttributeType>(below(rng, 14)));
    return;
  }
  switch (a.type()) {
    case A::INT:
      a.set_i(some_int(rng));
      break;
    case A::FLOAT:
      a.set_f(pick(kFloats, rng));
      break;
    case A::STRING:
      a.set_s(pick(kStrings, rng));
      break;
    case A::INTS:
      mutate_ints(*a.mutable_ints(), rng);
      break;
    case A::FLOATS:
      if (a.floats_size() == 0 || one_in(rng, 2)) a.add_floats(pick(kFloats, rng));
      else a.set_floats(static_cast<int>(below(rng, a.floats_size())), pick(kFloats, rng));
      break;
    case A::TENSOR:
      mutate_tensor(*a.mutable_t(), rng);
      break;
    case A::GRAPH:
      if (a.g().node_size() > 0) {
        onnx::GraphProto* g = a.mutable_g();
        g->mutable_node(static_cast<int>(below(rng, g->node_size())))
            ->set_op_type(pick(kOpTypes, rng));
      }
      break;
    default:
      a.set_type(A::INT);
      a.set_i(some_int(rng));
  }
}

// An attribute of a random name and kind, or a new value for one the node has.
void mutate_node_attributes(onnx::NodeProto& n, Rng& rng) {
  if (n.attribute_size() > 0 && !one_in(rng, 3)) {
    if (one_in(rng, 6)) {
      n.mutable_attribute()->DeleteSubrange(static_cast<int>(below(rng, n.attribute_size())), 1);
      return;
    }
    mutate_attribute(*n.mutable_attribute(static_cast<int>(below(rng, n.attribute_size()))), rng);
    return;
  }
  using A = onnx::AttributeProto;
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name(pick(kAttrNames, rng));
  switch (below(rng, 4)) {
    case 0:
      a->set_type(A::INT);
      a->set_i(some_int(rng));
      break;
    case 1:
      a->set_type(A::INTS);
      for (int64_t i = below(rng, 5); i > 0; --i) a->add_ints(some_int(rng));
      break;
    case 2:
      a->set_type(A::FLOAT);
      a->set_f(pick(kFloats, rng));
      break;
    default:
      a->set_type(A::STRING);
      a->set_s(pick(kStrings, rng));
  }
}

void mutate_node_wiring(onnx::GraphProto& g, onnx::NodeProto& n, Rng& rng) {
  const std::vector<std::string> names = tensor_names(g);
  switch (below(rng, 5)) {
    case 0:  // read another tensor (possibly one defined later: a cycle or a forward reference)
      if (n.input_size() > 0 && !names.empty())
        n.set_input(static_cast<int>(below(rng, n.input_size())), names[below(rng, names.size())]);
      break;
    case 1:
      if (!names.empty()) n.add_input(one_in(rng, 4) ? "" : names[below(rng, names.size())]);
      break;
    case 2:
      if (n.input_size() > 0) n.mutable_input()->RemoveLast();
      break;
    case 3:
      n.add_output(n.name() + "_extra" + std::to_string(n.output_size()));
      break;
    default:
      if (n.output_size() > 0) {
        if (one_in(rng, 2)) n.mutable_output()->RemoveLast();
        else if (!names.empty())  // an output name that is taken already
          n.set_output(static_cast<int>(below(rng, n.output_size())),
                       names[below(rng, names.size())]);
      }
  }
}

void mutate_value_info(onnx::ValueInfoProto& vi, Rng& rng) {
  onnx::TypeProto_Tensor* tt = vi.mutable_type()->mutable_tensor_type();
  if (one_in(rng, 4)) {
    tt->set_elem_type(static_cast<int32_t>(below(rng, 24)));
    return;
  }
  onnx::TensorShapeProto* shape = tt->mutable_shape();
  if (shape->dim_size() == 0 || one_in(rng, 4)) {
    shape->add_dim()->set_dim_value(below(rng, 5));
    return;
  }
  auto* d = shape->mutable_dim(static_cast<int>(below(rng, shape->dim_size())));
  switch (below(rng, 4)) {
    case 0:
      d->set_dim_param("n");
      break;
    case 1:
      d->clear_dim_value();
      d->clear_dim_param();
      break;
    case 2:
      shape->mutable_dim()->RemoveLast();
      break;
    default:
      d->set_dim_value(one_in(rng, 4) ? some_int(rng) : below(rng, 6));
  }
}

void mutate_graph(onnx::GraphProto& g, Rng& rng) {
  const int nodes = g.node_size();
  switch (below(rng, 12)) {
    case 0:
    case 1:
    case 2:
      if (nodes) mutate_node_attributes(*g.mutable_node(static_cast<int>(below(rng, nodes))), rng);
      break;
    case 3:
      if (nodes)
        g.mutable_node(static_cast<int>(below(rng, nodes)))->set_op_type(pick(kOpTypes, rng));
      break;
    case 4:
    case 5:
      if (nodes) mutate_node_wiring(g, *g.mutable_node(static_cast<int>(below(rng, nodes))), rng);
      break;
    case 6:  // delete, duplicate or reorder nodes
      if (nodes == 0) break;
      if (one_in(rng, 3)) {
        g.mutable_node()->DeleteSubrange(static_cast<int>(below(rng, nodes)), 1);
      } else if (one_in(rng, 2)) {
        *g.add_node() = g.node(static_cast<int>(below(rng, nodes)));
      } else {
        g.mutable_node()->SwapElements(static_cast<int>(below(rng, nodes)),
                                       static_cast<int>(below(rng, nodes)));
      }
      break;
    case 7:
      if (g.input_size()) mutate_value_info(*g.mutable_input(static_cast<int>(below(rng, g.input_size()))), rng);
      break;
    case 8:
      if (g.initializer_size())
        mutate_tensor(*g.mutable_initializer(static_cast<int>(below(rng, g.initializer_size()))), rng);
      break;
    case 9:  // outputs: drop one, or expose an intermediate tensor
      if (g.output_size() > 1 && one_in(rng, 2)) {
        g.mutable_output()->RemoveLast();
      } else {
        const std::vector<std::string> names = tensor_names(g);
        if (!names.empty()) g.add_output()->set_name(names[below(rng, names.size())]);
      }
      break;
    case 10:  // a subgraph attribute's body
      for (auto& n : *g.mutable_node())
        for (auto& a : *n.mutable_attribute())
          if (a.type() == onnx::AttributeProto::GRAPH && one_in(rng, 2)) {
            mutate_graph(*a.mutable_g(), rng);
            return;
          }
      break;
    default:
      if (nodes) {
        onnx::NodeProto& n = *g.mutable_node(static_cast<int>(below(rng, nodes)));
        n.set_domain(one_in(rng, 2) ? "ai.onnx.ml" : one_in(rng, 2) ? "com.microsoft" : "");
      }
  }
}

void mutate_opset(onnx::ModelProto& model, Rng& rng) {
  for (auto& id : *model.mutable_opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx") {
      id.set_version(one_in(rng, 8) ? some_int(rng) : 1 + below(rng, 26));
      return;
    }
  }
  auto* id = model.add_opset_import();
  id->set_version(1 + below(rng, 26));
}

}  // namespace

void mutate_model(onnx::ModelProto& model, Rng& rng) {
  for (int64_t k = 1 + below(rng, 3); k > 0; --k) {
    if (one_in(rng, 16)) mutate_opset(model, rng);
    else mutate_graph(*model.mutable_graph(), rng);
  }
}

void cross_models(onnx::ModelProto& model, const onnx::ModelProto& donor, Rng& rng) {
  const onnx::GraphProto& from = donor.graph();
  onnx::GraphProto& to = *model.mutable_graph();
  if (from.node_size() == 0) return;
  const int start = static_cast<int>(below(rng, from.node_size()));
  const int count = static_cast<int>(std::min<int64_t>(1 + below(rng, 4), from.node_size() - start));
  std::vector<std::string> names = tensor_names(to);
  std::vector<std::string> known = names;
  std::sort(known.begin(), known.end());
  for (int i = start; i < start + count; ++i) {
    onnx::NodeProto n = from.node(i);
    for (int k = 0; k < n.input_size(); ++k) {
      const std::string& in = n.input(k);
      if (in.empty() || std::binary_search(known.begin(), known.end(), in)) continue;
      const auto init = std::find_if(from.initializer().begin(), from.initializer().end(),
                                     [&](const onnx::TensorProto& t) { return t.name() == in; });
      if (init != from.initializer().end() && init->ByteSizeLong() < 4096) {
        *to.add_initializer() = *init;
      } else if (!names.empty()) {
        n.set_input(k, names[below(rng, names.size())]);
      }
    }
    for (int k = 0; k < n.output_size(); ++k) n.set_output(k, "x_" + n.output(k));
    for (const auto& out : n.output()) {
      names.push_back(out);
      known.insert(std::upper_bound(known.begin(), known.end(), out), out);
    }
    *to.add_node() = std::move(n);
  }
  if (!names.empty() && one_in(rng, 2)) to.add_output()->set_name(names.back());
}

}  // namespace collage::fuzz
