// ONNX import: tensors, inputs, constants, external data, folding, opset conversions, names.
#include <cmath>
#include <fstream>
#include <limits>

#include <catch2/catch.hpp>

#include "collage/onnx.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "frontends/onnx_test_model.h"

namespace collage::testing {
namespace {

using TP = onnx::TensorProto;

Tensor run_single(const Graph& g, const std::vector<Tensor>& inputs) {
  auto outs = run_reference(g, inputs);
  INFO(outs.status().ToString());
  REQUIRE(outs.ok());
  REQUIRE(outs->size() == 1);
  return outs->front();
}

std::vector<float> f32_values(const Tensor& t) {
  REQUIRE(t.dtype() == DType::f32);
  return {t.data<float>(), t.data<float>() + t.numel()};
}

TEST_CASE("graph outputs may be graph inputs and initializers", "[onnx]") {
  Context ctx;
  OnnxModel m;
  m.input("x", TP::FLOAT, {2, 3});
  m.initializer("w", Tensor::from_f32({2}, std::vector<float>{1.5f, -2.f}));
  m.output("x").output("w");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  REQUIRE(g->inputs().size() == 1);
  REQUIRE(g->outputs().size() == 2);
  CHECK(g->value(g->outputs()[0]).name == "x");
  CHECK(g->value(g->outputs()[1]).name == "w");
  CHECK(g->value(g->outputs()[1]).kind == ValueKind::constant);
  Tensor x = random_f32({2, 3}, 1);
  auto outs = run_reference(*g, {x});
  REQUIRE(outs.ok());
  CHECK((*outs)[0].identical(x));
  CHECK(f32_values((*outs)[1]) == std::vector<float>{1.5f, -2.f});
}

TEST_CASE("initializers listed as inputs are constants", "[onnx]") {
  Context ctx;
  OnnxModel m;
  m.input("x", TP::FLOAT, {2}).input("w", TP::FLOAT, {2});
  m.initializer("w", Tensor::from_f32({2}, std::vector<float>{1.f, 2.f}));
  m.node("Add", {"x", "w"}, {"y"});
  m.output("y");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  REQUIRE(g->inputs().size() == 1);
  Tensor y = run_single(*g, {Tensor::from_f32({2}, std::vector<float>{10.f, 20.f})});
  CHECK(f32_values(y) == std::vector<float>{11.f, 22.f});
}

TEST_CASE("Constant node forms", "[onnx]") {
  Context ctx;
  OnnxModel m;
  attr_tensor(m.node("Constant", {}, {"a"}), "value",
              Tensor::from_i64({2}, std::vector<int64_t>{4, 5}));
  attr_float(m.node("Constant", {}, {"b"}), "value_float", 2.5f);
  attr_floats(m.node("Constant", {}, {"c"}), "value_floats", {1.f, 2.f, 3.f});
  attr_int(m.node("Constant", {}, {"d"}), "value_int", 7);
  attr_ints(m.node("Constant", {}, {"e"}), "value_ints", {-1, 8});
  for (const char* o : {"a", "b", "c", "d", "e"}) m.output(o);
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->nodes().empty());
  auto outs = run_reference(*g, {});
  REQUIRE(outs.ok());
  CHECK((*outs)[0].to_int64_vector() == std::vector<int64_t>{4, 5});
  CHECK((*outs)[1].type() == TensorType{DType::f32, {}});
  CHECK((*outs)[1].data<float>()[0] == 2.5f);
  CHECK(f32_values((*outs)[2]) == std::vector<float>{1.f, 2.f, 3.f});
  CHECK((*outs)[3].type() == TensorType{DType::i64, {}});
  CHECK((*outs)[3].get_as_int64(0) == 7);
  CHECK((*outs)[4].to_int64_vector() == std::vector<int64_t>{-1, 8});
  CHECK(g->value(g->outputs()[4]).name == "e");
}

TEST_CASE("initializer data in raw_data and typed fields", "[onnx]") {
  Context ctx;
  OnnxModel m;
  // raw_data for every supported type
  m.initializer("f16", Tensor(DType::f16, {2}));
  m.graph().mutable_initializer(0)->set_raw_data(std::string("\x00\x3c\x00\xc0", 4));  // 1, -2
  m.initializer("bf16", Tensor(DType::bf16, {1}));
  m.graph().mutable_initializer(1)->set_raw_data(std::string("\x80\x3f", 2));  // 1.0
  m.initializer("b_raw", Tensor(DType::boolean, {2}));
  m.graph().mutable_initializer(2)->set_raw_data(std::string("\x00\x05", 2));
  // typed fields
  auto typed = [&](const std::string& name, int32_t type, std::vector<int64_t> dims) {
    TP& t = *m.graph().add_initializer();
    t.set_name(name);
    t.set_data_type(type);
    for (int64_t d : dims) t.add_dims(d);
    return &t;
  };
  TP* f = typed("f32_typed", TP::FLOAT, {3});
  for (float v : {0.5f, -1.f, 3.f}) f->add_float_data(v);
  TP* i64 = typed("i64_typed", TP::INT64, {2});
  i64->add_int64_data(-5);
  i64->add_int64_data(int64_t{1} << 40);
  TP* i32 = typed("i32_typed", TP::INT32, {2});
  i32->add_int32_data(-7);
  i32->add_int32_data(9);
  TP* i8 = typed("i8_typed", TP::INT8, {2});
  i8->add_int32_data(-128);
  i8->add_int32_data(127);
  TP* b = typed("bool_typed", TP::BOOL, {3});
  for (int v : {1, 0, 1}) b->add_int32_data(v);
  TP* h = typed("f16_typed", TP::FLOAT16, {1});
  h->add_int32_data(0x3c00);
  TP* s = typed("scalar_typed", TP::FLOAT, {});
  s->add_float_data(4.f);
  for (const char* o : {"f16", "bf16", "b_raw", "f32_typed", "i64_typed", "i32_typed", "i8_typed",
                        "bool_typed", "f16_typed", "scalar_typed"})
    m.output(o);
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  auto outs = run_reference(*g, {});
  REQUIRE(outs.ok());
  const auto& o = *outs;
  CHECK(o[0].dtype() == DType::f16);
  CHECK(half_to_float(o[0].data<uint16_t>()[0]) == 1.f);
  CHECK(half_to_float(o[0].data<uint16_t>()[1]) == -2.f);
  CHECK(bfloat16_to_float(o[1].data<uint16_t>()[0]) == 1.f);
  CHECK(o[2].dtype() == DType::boolean);
  CHECK(o[2].to_int64_vector() == std::vector<int64_t>{0, 1});
  CHECK(f32_values(o[3]) == std::vector<float>{0.5f, -1.f, 3.f});
  CHECK(o[4].to_int64_vector() == std::vector<int64_t>{-5, int64_t{1} << 40});
  CHECK(o[5].dtype() == DType::i32);
  CHECK(o[5].to_int64_vector() == std::vector<int64_t>{-7, 9});
  CHECK(o[6].dtype() == DType::i8);
  CHECK(o[6].to_int64_vector() == std::vector<int64_t>{-128, 127});
  CHECK(o[7].to_int64_vector() == std::vector<int64_t>{1, 0, 1});
  CHECK(half_to_float(o[8].data<uint16_t>()[0]) == 1.f);
  CHECK(o[9].type() == TensorType{DType::f32, {}});
}

// Marks initializer `t` as stored in `location` at `offset`.
void make_external(TP& t, const std::string& location, int64_t offset, int64_t length) {
  t.clear_raw_data();
  t.set_data_location(TP::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    auto* e = t.add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  kv("offset", std::to_string(offset));
  if (length >= 0) kv("length", std::to_string(length));
}

TEST_CASE("external data is read relative to the model's folder", "[onnx]") {
  Context ctx;
  const auto dir = fresh_test_dir("external_ok");
  std::filesystem::create_directories(dir / "weights");
  const std::vector<float> a{1.f, 2.f, 3.f}, b{-4.f, 5.f};
  {
    std::ofstream out(dir / "weights" / "data.bin", std::ios::binary);
    out.write("0123456789ABCDEF", 16);  // leading bytes the offsets skip
    out.write(reinterpret_cast<const char*>(a.data()), 12);
    out.write(reinterpret_cast<const char*>(b.data()), 8);
  }
  OnnxModel m;
  make_external(m.initializer("a", Tensor(DType::f32, {3})), "weights/data.bin", 16, 12);
  make_external(m.initializer("b", Tensor(DType::f32, {2})), "./weights/../weights/data.bin", 28,
                -1);
  m.output("a").output("b");
  const auto path = m.save(dir, "model.onnx");

  auto g = import_onnx_file(ctx, path);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  auto outs = run_reference(*g, {});
  REQUIRE(outs.ok());
  CHECK(f32_values((*outs)[0]) == a);
  CHECK(f32_values((*outs)[1]) == b);

  auto from_memory = m.import(ctx, {}, dir);
  INFO(from_memory.status().ToString());
  REQUIRE(from_memory.ok());
  auto outs2 = run_reference(*from_memory, {});
  REQUIRE(outs2.ok());
  CHECK(f32_values((*outs2)[1]) == b);
}

TEST_CASE("symbolic input dimensions take the shapes given in the options", "[onnx]") {
  Context ctx;
  OnnxModel m;
  m.input_dims("x", TP::FLOAT, {"batch", "3"});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  OnnxImportOptions opts;
  opts.input_shapes["x"] = {4, 3};
  auto g = m.import(ctx, opts);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->value(g->inputs()[0]).type == TensorType{DType::f32, {4, 3}});
  CHECK(g->value(g->outputs()[0]).type == TensorType{DType::f32, {4, 3}});
  CHECK(g->value(g->outputs()[0]).name == "y");
}

TEST_CASE("an explicit zero dimension is an empty tensor unless a shape is given", "[onnx]") {
  Context ctx;
  OnnxModel m;
  m.input("x", TP::FLOAT, {0, 3});
  m.output("x");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->value(g->inputs()[0]).type.shape == Shape{0, 3});
  OnnxImportOptions opts;
  opts.input_shapes["x"] = {5, 3};
  auto given = m.import(ctx, opts);
  INFO(given.status().ToString());
  REQUIRE(given.ok());
  CHECK(given->value(given->inputs()[0]).type.shape == Shape{5, 3});
}

TEST_CASE("Shape->Gather->Concat->Reshape chains fold at import", "[onnx]") {
  Context ctx;
  OnnxModel m(13);
  m.input("x", TP::FLOAT, {2, 3, 4});
  m.initializer("zero", Tensor::scalar_i64(0));
  m.initializer("minus_one", Tensor::from_i64({1}, std::vector<int64_t>{-1}));
  m.initializer("axes0", Tensor::from_i64({1}, std::vector<int64_t>{0}));
  m.node("Shape", {"x"}, {"shape"});
  m.node("Gather", {"shape", "zero"}, {"batch"});
  m.node("Unsqueeze", {"batch", "axes0"}, {"batch1"});
  attr_int(m.node("Concat", {"batch1", "minus_one"}, {"new_shape"}), "axis", 0);
  m.node("Reshape", {"x", "new_shape"}, {"y"}, "flatten");
  m.output("y");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  REQUIRE(g->nodes().size() == 1);
  CHECK(g->nodes()[0].op_name() == "Reshape");
  CHECK(g->nodes()[0].name == "flatten");
  CHECK(g->constants().empty());  // every shape constant was consumed by folding
  CHECK(g->value(g->outputs()[0]).type == TensorType{DType::f32, {2, 12}});
  Tensor x = random_f32({2, 3, 4}, 7);
  Tensor y = run_single(*g, {x});
  CHECK(f32_values(y) == f32_values(x));
}

TEST_CASE("constant subgraphs fold and keep their output names", "[onnx]") {
  Context ctx;
  OnnxModel m;
  m.initializer("a", Tensor::from_f32({2}, std::vector<float>{1.f, 2.f}));
  m.initializer("b", Tensor::from_f32({2}, std::vector<float>{3.f, 4.f}));
  m.node("Add", {"a", "b"}, {"sum"});
  m.node("Relu", {"sum"}, {"out"});
  m.output("out");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->nodes().empty());
  REQUIRE(g->constants().size() == 1);
  CHECK(g->value(g->outputs()[0]).name == "out");
  CHECK(f32_values(g->constants()[0]) == std::vector<float>{4.f, 6.f});
}

TEST_CASE("Softmax before opset 13 flattens to 2-D at the axis", "[onnx]") {
  Context ctx;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    DYNAMIC_SECTION(op) {
      OnnxModel m(11);
      m.input("x", TP::FLOAT, {2, 3, 4});
      attr_int(m.node(op, {"x"}, {"y"}, "sm"), "axis", 1);
      m.output("y");
      auto g = m.import(ctx);
      INFO(g.status().ToString());
      REQUIRE(g.ok());
      CHECK(g->nodes().size() == 3);
      CHECK(g->value(g->outputs()[0]).name == "y");
      Tensor x = random_f32({2, 3, 4}, 3, -2.f, 2.f);
      Tensor y = run_single(*g, {x});
      REQUIRE(y.shape() == Shape{2, 3, 4});
      // Reference: normalise over the 12 trailing elements of each batch row.
      for (int b = 0; b < 2; ++b) {
        const float* in = x.data<float>() + 12 * b;
        double sum = 0;
        for (int i = 0; i < 12; ++i) sum += std::exp(in[i]);
        for (int i = 0; i < 12; ++i) {
          double expect = std::exp(in[i]) / sum;
          if (std::string(op) == "LogSoftmax") expect = std::log(expect);
          CHECK(y.data<float>()[12 * b + i] == Approx(expect).epsilon(1e-5));
        }
      }
    }
  }
}

TEST_CASE("Softmax before opset 13 on the last axis stays one node", "[onnx]") {
  Context ctx;
  OnnxModel m(12);
  m.input("x", TP::FLOAT, {2, 5});
  m.node("Softmax", {"x"}, {"y"});  // default axis 1 is the last axis here
  m.output("y");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  REQUIRE(g->nodes().size() == 1);
  CHECK(g->nodes()[0].op_name() == "Softmax");
}

TEST_CASE("shape-like inputs become attributes", "[onnx]") {
  Context ctx;
  SECTION("Clip min/max inputs") {
    OnnxModel m(13);
    m.input("x", TP::FLOAT, {4});
    m.initializer("lo", Tensor::scalar_f32(-0.5f));
    m.initializer("hi", Tensor::scalar_f32(0.25f));
    m.node("Clip", {"x", "lo", "hi"}, {"y"});
    m.output("y");
    auto g = m.import(ctx);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    Tensor y = run_single(*g, {Tensor::from_f32({4}, std::vector<float>{-1.f, 0.f, 0.2f, 3.f})});
    CHECK(f32_values(y) == std::vector<float>{-0.5f, 0.f, 0.2f, 0.25f});
  }
  SECTION("Clip with only max") {
    OnnxModel m(13);
    m.input("x", TP::FLOAT, {2});
    m.initializer("hi", Tensor::scalar_f32(1.f));
    m.node("Clip", {"x", "", "hi"}, {"y"});
    m.output("y");
    auto g = m.import(ctx);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    Tensor y = run_single(*g, {Tensor::from_f32({2}, std::vector<float>{-5.f, 5.f})});
    CHECK(f32_values(y) == std::vector<float>{-5.f, 1.f});
  }
  SECTION("ReduceSum axes: attribute at opset 11, input at opset 13") {
    for (int opset : {11, 13}) {
      OnnxModel m(opset);
      m.input("x", TP::FLOAT, {2, 2});
      if (opset == 11) {
        attr_ints(m.node("ReduceSum", {"x"}, {"y"}), "axes", {1});
      } else {
        m.initializer("axes", Tensor::from_i64({1}, std::vector<int64_t>{1}));
        m.node("ReduceSum", {"x", "axes"}, {"y"});
      }
      m.output("y");
      auto g = m.import(ctx);
      INFO(g.status().ToString());
      REQUIRE(g.ok());
      Tensor y = run_single(*g, {Tensor::from_f32({2, 2}, std::vector<float>{1, 2, 3, 4})});
      CHECK(y.shape() == Shape{2, 1});
      CHECK(f32_values(y) == std::vector<float>{3.f, 7.f});
    }
  }
  SECTION("ReduceMean axes input at opset 18") {
    OnnxModel m(18);
    m.input("x", TP::FLOAT, {2, 2});
    m.initializer("axes", Tensor::from_i64({1}, std::vector<int64_t>{0}));
    attr_int(m.node("ReduceMean", {"x", "axes"}, {"y"}), "keepdims", 0);
    m.output("y");
    auto g = m.import(ctx);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    Tensor y = run_single(*g, {Tensor::from_f32({2, 2}, std::vector<float>{1, 2, 3, 4})});
    CHECK(f32_values(y) == std::vector<float>{2.f, 3.f});
  }
  SECTION("Split num_outputs at opset 18") {
    OnnxModel m(18);
    m.input("x", TP::FLOAT, {5});
    attr_int(m.node("Split", {"x"}, {"a", "b"}), "num_outputs", 2);
    m.output("a").output("b");
    auto g = m.import(ctx);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    CHECK(g->value(g->outputs()[0]).type.shape == Shape{3});
    CHECK(g->value(g->outputs()[1]).type.shape == Shape{2});
    CHECK(g->value(g->outputs()[1]).name == "b");
  }
  SECTION("Pad with constant_value input") {
    OnnxModel m(13);
    m.input("x", TP::FLOAT, {2});
    m.initializer("pads", Tensor::from_i64({2}, std::vector<int64_t>{1, 2}));
    m.initializer("v", Tensor::scalar_f32(9.f));
    m.node("Pad", {"x", "pads", "v"}, {"y"});
    m.output("y");
    auto g = m.import(ctx);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    Tensor y = run_single(*g, {Tensor::from_f32({2}, std::vector<float>{1.f, 2.f})});
    CHECK(f32_values(y) == std::vector<float>{9.f, 1.f, 2.f, 9.f, 9.f});
  }
  SECTION("Unsqueeze axes attribute at opset 11") {
    OnnxModel m(11);
    m.input("x", TP::FLOAT, {3});
    attr_ints(m.node("Unsqueeze", {"x"}, {"y"}), "axes", {0, 2});
    m.output("y");
    auto g = m.import(ctx);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    CHECK(g->value(g->outputs()[0]).type.shape == Shape{1, 3, 1});
  }
  SECTION("Cast to an ONNX type") {
    OnnxModel m;
    m.input("x", TP::FLOAT, {2});
    attr_int(m.node("Cast", {"x"}, {"y"}), "to", TP::INT32);
    m.output("y");
    auto g = m.import(ctx);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    CHECK(g->value(g->outputs()[0]).type == TensorType{DType::i32, {2}});
  }
  SECTION("Dropout ratio input, unused mask") {
    OnnxModel m(13);
    m.input("x", TP::FLOAT, {3});
    m.initializer("ratio", Tensor::scalar_f32(0.25f));
    m.node("Dropout", {"x", "ratio"}, {"y", "mask"});
    m.output("y");
    auto g = m.import(ctx);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    Tensor x = random_f32({3}, 5);
    CHECK(run_single(*g, {x}).identical(x));
  }
  SECTION("ConstantOfShape folds to a constant") {
    OnnxModel m;
    m.initializer("shape", Tensor::from_i64({2}, std::vector<int64_t>{2, 3}));
    attr_tensor(m.node("ConstantOfShape", {"shape"}, {"y"}), "value",
                Tensor::from_i64({1}, std::vector<int64_t>{7}));
    m.output("y");
    auto g = m.import(ctx);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    CHECK(g->nodes().empty());
    CHECK(g->value(g->outputs()[0]).type == TensorType{DType::i64, {2, 3}});
  }
  SECTION("a shape with more bytes than memory can address is refused, not overflowed") {
    // A fuzzer finding: the folding bound multiplied 2^63 - 1 by 768 (signed overflow, UBSan).
    OnnxModel m;
    const int64_t huge = std::numeric_limits<int64_t>::max();
    m.initializer("shape", Tensor::from_i64({2}, std::vector<int64_t>{huge, 768}));
    attr_tensor(m.node("ConstantOfShape", {"shape"}, {"y"}), "value",
                Tensor::from_i64({1}, std::vector<int64_t>{7}));
    m.output("y");
    auto g = m.import(ctx);
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(std::string(g.status().message()),
               Catch::Contains("an output of shape 9223372036854775807x768 has more bytes "
                               "than memory can address"));
  }
}

TEST_CASE("opset 18 axes inputs and attributes", "[onnx]") {
  Context ctx;
  SECTION("Pad with axes") {
    OnnxModel m(18);
    m.input("x", TP::FLOAT, {2, 2});
    m.initializer("pads", Tensor::from_i64({2}, std::vector<int64_t>{1, 0}));
    m.initializer("axes", Tensor::from_i64({1}, std::vector<int64_t>{-1}));
    m.node("Pad", {"x", "pads", "", "axes"}, {"y"});
    m.output("y");
    auto g = m.import(ctx);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    Tensor y = run_single(*g, {Tensor::from_f32({2, 2}, std::vector<float>{1, 2, 3, 4})});
    CHECK(y.shape() == Shape{2, 3});
    CHECK(f32_values(y) == std::vector<float>{0, 1, 2, 0, 3, 4});
  }
  SECTION("Resize with axes") {
    OnnxModel m(18);
    m.input("x", TP::FLOAT, {1, 1, 2, 3});
    m.initializer("scales", Tensor::from_f32({1}, std::vector<float>{2.f}));
    auto& n = m.node("Resize", {"x", "", "scales"}, {"y"});
    attr_ints(n, "axes", {2});
    attr_string(n, "mode", "nearest");
    m.output("y");
    auto g = m.import(ctx);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    CHECK(g->value(g->outputs()[0]).type.shape == Shape{1, 1, 4, 3});
  }
}

TEST_CASE("Identity of a constant shares its buffer", "[onnx]") {
  Context ctx;
  OnnxModel m;
  m.initializer("w", Tensor::from_f32({2}, std::vector<float>{1.f, 2.f}));
  m.node("Identity", {"w"}, {"tied"});
  m.output("w").output("tied");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  REQUIRE(g->constants().size() == 2);
  CHECK(g->constants()[0].raw() == g->constants()[1].raw());
  CHECK(g->value(g->outputs()[1]).name == "tied");
}

TEST_CASE("unused training outputs are ignored", "[onnx]") {
  Context ctx;
  OnnxModel m;
  m.input("x", TP::FLOAT, {1, 1, 4, 4});
  auto& n = m.node("MaxPool", {"x"}, {"y", "indices"});
  attr_ints(n, "kernel_shape", {2, 2});
  attr_ints(n, "strides", {2, 2});
  m.output("y");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->value(g->outputs()[0]).type.shape == Shape{1, 1, 2, 2});
}

TEST_CASE("ONNX tensor names survive clashes with node names", "[onnx]") {
  Context ctx;
  OnnxModel m;
  m.input("x", TP::FLOAT, {2});
  // The first node is named like the graph output the second node produces, and the second like
  // the graph input.
  m.node("Relu", {"x"}, {"t"}, "y");
  m.node("Neg", {"t"}, {"y"}, "x");
  m.output("y").output("t");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->value(g->inputs()[0]).name == "x");
  CHECK(g->value(g->outputs()[0]).name == "y");
  CHECK(g->value(g->outputs()[1]).name == "t");
  auto outs = run_reference(*g, {Tensor::from_f32({2}, std::vector<float>{-1.f, 2.f})});
  REQUIRE(outs.ok());
  CHECK(f32_values((*outs)[0]) == std::vector<float>{-0.f, -2.f});
  CHECK(f32_values((*outs)[1]) == std::vector<float>{0.f, 2.f});
}

}  // namespace
}  // namespace collage::testing

namespace collage::testing {
namespace {

TEST_CASE("the wider element types import and run", "[onnx]") {
  Context ctx;
  SECTION("uint8 Add wraps") {
    OnnxModel m;
    m.input("a", TP::UINT8, {2}).input("b", TP::UINT8, {2});
    m.node("Add", {"a", "b"}, {"y"}, "add");
    m.output("y");
    auto g = m.import(ctx);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    Tensor a(DType::u8, {2}), b(DType::u8, {2});
    a.data<uint8_t>()[0] = 250, a.data<uint8_t>()[1] = 3;
    b.data<uint8_t>()[0] = 10, b.data<uint8_t>()[1] = 4;
    auto outs = run_reference(*g, {a, b});
    REQUIRE(outs.ok());
    REQUIRE((*outs)[0].dtype() == DType::u8);
    CHECK((*outs)[0].data<uint8_t>()[0] == 4);
    CHECK((*outs)[0].data<uint8_t>()[1] == 7);
  }
  SECTION("double initializer from double_data, Cast to f32") {
    OnnxModel m;
    TP t;
    t.set_name("d");
    t.set_data_type(TP::DOUBLE);
    t.add_dims(2);
    t.add_double_data(0.5);
    t.add_double_data(-1e300);
    *m.graph().add_initializer() = t;
    attr_int(m.node("Cast", {"d"}, {"y"}, "c"), "to", TP::FLOAT);
    m.output("y");
    auto g = m.import(ctx);
    INFO(g.status().ToString());
    REQUIRE(g.ok());
    auto outs = run_reference(*g, {});
    REQUIRE(outs.ok());
    CHECK((*outs)[0].data<float>()[0] == 0.5f);
    CHECK(std::isinf((*outs)[0].data<float>()[1]));
  }
}

TEST_CASE("each node is imported with its operator's version at the model's opset", "[onnx]") {
  Context ctx;
  // Slice 1 (opset 9) takes starts and ends as attributes; Slice 10 and later as inputs.
  OnnxModel m(9);
  m.input("x", TP::FLOAT, {4});
  auto& n = m.node("Slice", {"x"}, {"y"}, "s");
  attr_ints(n, "starts", {1});
  attr_ints(n, "ends", {3});
  m.output("y");
  auto g = m.import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  auto outs = run_reference(*g, {Tensor::from_f32({4}, std::vector<float>{1, 2, 3, 4})});
  REQUIRE(outs.ok());
  CHECK(f32_values((*outs)[0]) == std::vector<float>{2, 3});
}

}  // namespace
}  // namespace collage::testing
