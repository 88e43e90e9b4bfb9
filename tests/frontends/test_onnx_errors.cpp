// ONNX import errors: each bad model gives its specific status code and message, never a crash.
#include <fstream>
#include <limits>

#include <catch2/catch.hpp>

#include "collage/onnx.h"
#include "frontends/onnx_test_model.h"

namespace collage::testing {
namespace {

using TP = onnx::TensorProto;
using absl::StatusCode;

// x (f32 [2,3]) -> Relu -> y
OnnxModel relu_model(int opset = 17) {
  OnnxModel m(opset);
  m.input("x", TP::FLOAT, {2, 3});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  return m;
}

void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST_CASE("unreadable model files", "[onnx][errors]") {
  Context ctx;
  const auto dir = fresh_test_dir("bad_files");
  SECTION("missing file") {
    auto g = import_onnx_file(ctx, dir / "absent.onnx");
    check_error(g.status(), StatusCode::kNotFound, "absent.onnx");
  }
  SECTION("a directory") {
    auto g = import_onnx_file(ctx, dir);
    check_error(g.status(), StatusCode::kInvalidArgument, "it is a directory");
  }
  SECTION("truncated file") {
    OnnxModel m = relu_model();
    m.initializer("w", Tensor(DType::f32, {64}));
    const std::string bytes = m.bytes();
    write_bytes(dir / "truncated.onnx", bytes.substr(0, bytes.size() - 100));
    auto g = import_onnx_file(ctx, dir / "truncated.onnx");
    check_error(g.status(), StatusCode::kInvalidArgument, "truncated.onnx");
    check_error(g.status(), StatusCode::kInvalidArgument, "cannot parse");
  }
  SECTION("garbage bytes") {
    write_bytes(dir / "garbage.onnx", std::string(200, '\xff'));
    auto g = import_onnx_file(ctx, dir / "garbage.onnx");
    check_error(g.status(), StatusCode::kInvalidArgument, "cannot parse '");
    check_error(g.status(), StatusCode::kInvalidArgument, "garbage.onnx");
  }
  SECTION("garbage buffer") {
    const std::string junk(64, '\xff');
    auto g = import_onnx_buffer(
        ctx, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(junk.data()), junk.size()));
    check_error(g.status(), StatusCode::kInvalidArgument, "cannot parse the ONNX model buffer");
  }
  SECTION("a protobuf without a graph") {
    onnx::ModelProto empty;
    empty.set_ir_version(8);
    write_bytes(dir / "nograph.onnx", empty.SerializeAsString());
    auto g = import_onnx_file(ctx, dir / "nograph.onnx");
    check_error(g.status(), StatusCode::kInvalidArgument, "no graph in ");
  }
}

TEST_CASE("opsets and domains", "[onnx][errors]") {
  Context ctx;
  SECTION("opset newer than the version table") {
    check_error(relu_model(29).import(ctx).status(), StatusCode::kUnimplemented,
                "the model uses opset 29 of the default ONNX domain; the newest collage knows is "
                "28");
  }
  SECTION("opset 0") {
    check_error(relu_model(0).import(ctx).status(), StatusCode::kInvalidArgument,
                "the model imports opset 0 of the default ONNX domain");
  }
  SECTION("operator version older than the conversion handles") {
    // Relu 1 has consumed_inputs; collage imports Relu from version 6.
    check_error(relu_model(5).import(ctx).status(), StatusCode::kUnimplemented,
                "unsupported operator 'Relu' version 1 (node 'relu', opset 5): collage imports "
                "versions 6 and newer");
  }
  SECTION("operator removed from ONNX") {
    OnnxModel m(11);
    m.input("x", TP::FLOAT, {1, 1, 2, 2});
    m.node("Upsample", {"x"}, {"y"}, "up");
    m.output("y");
    check_error(m.import(ctx).status(), StatusCode::kUnimplemented,
                "unsupported operator 'Upsample' (node 'up', opset 11): ONNX removed 'Upsample' "
                "at opset 10");
  }
  SECTION("no default-domain opset") {
    OnnxModel m = relu_model();
    m.proto().mutable_opset_import(0)->set_domain("com.example");
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument,
                "imports no opset of the default ONNX domain");
  }
  SECTION("node from another domain") {
    OnnxModel m = relu_model();
    m.graph().mutable_node(0)->set_domain("com.microsoft");
    check_error(m.import(ctx).status(), StatusCode::kUnimplemented,
                "unsupported operator 'com.microsoft.Relu' (node 'relu', domain 'com.microsoft')");
  }
  SECTION("ai.onnx.ml node") {
    OnnxModel m = relu_model();
    m.graph().mutable_node(0)->set_domain("ai.onnx.ml");
    check_error(m.import(ctx).status(), StatusCode::kUnimplemented, "ai.onnx.ml domain");
  }
  SECTION("operator newer than the model's opset") {
    OnnxModel m(17);
    m.input("x", TP::FLOAT, {2});
    m.node("Gelu", {"x"}, {"y"}, "g");
    m.output("y");
    check_error(m.import(ctx).status(), StatusCode::kUnimplemented,
                "unsupported operator 'Gelu' (node 'g', opset 17): the default domain has it from "
                "opset 20");
  }
}

TEST_CASE("unknown operator names the node, opset and file", "[onnx][errors]") {
  Context ctx;
  const auto dir = fresh_test_dir("unknown_op");
  OnnxModel m(13);
  m.input("x", TP::FLOAT, {2});
  m.node("Foo", {"x"}, {"y"}, "n7");
  m.output("y");
  const auto path = m.save(dir, "model.onnx");
  auto g = import_onnx_file(ctx, path);
  check_error(g.status(), StatusCode::kUnimplemented,
              "unsupported operator 'Foo' (node 'n7', opset 13): ONNX has no operator 'Foo' (up to "
              "opset 28) in " + path.string());
}

TEST_CASE("missing tensors", "[onnx][errors]") {
  Context ctx;
  SECTION("missing initializer") {
    OnnxModel m;
    m.input("x", TP::FLOAT, {2});
    m.node("Add", {"x", "w"}, {"y"}, "add");
    m.output("y");
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument,
                "Add 'add': input 1 'w' is not a graph input, an initializer or the output of an "
                "earlier node");
  }
  SECTION("graph output nobody produces") {
    OnnxModel m = relu_model();
    m.output("nowhere");
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument,
                "graph output 'nowhere' is not produced");
  }
  SECTION("a tensor defined twice") {
    OnnxModel m = relu_model();
    m.node("Neg", {"x"}, {"y"}, "again");
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument,
                "Neg 'again': output 'y' is already defined");
  }
  SECTION("a required input named \"\" (absent), found by fuzz/onnx_brief") {
    OnnxModel m(11);  // Softmax before opset 13 has a conversion of its own
    m.input("x", TP::FLOAT, {2, 3});
    m.node("Softmax", {""}, {"y"}, "softmax");
    m.output("y");
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument,
                "required input 0 is missing");
  }
  SECTION("a model without outputs") {
    OnnxModel m;
    m.input("x", TP::FLOAT, {2});
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument, "has no outputs");
  }
}

TEST_CASE("graph inputs", "[onnx][errors]") {
  Context ctx;
  SECTION("symbolic dimension without a shape") {
    OnnxModel m;
    m.input_dims("x", TP::FLOAT, {"batch", "3", "224", "224"});
    m.output("x");
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument,
                "input 'x' has symbolic dimension 'batch' (dim 0); give its shape, e.g. "
                "--input-shape x=1x3x224x224");
  }
  SECTION("unknown dimension") {
    OnnxModel m;
    m.input_dims("x", TP::FLOAT, {"2", "?"});
    m.output("x");
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument,
                "input 'x' has an unknown dimension (dim 1)");
  }
  SECTION("given shape of the wrong rank") {
    OnnxModel m;
    m.input_dims("x", TP::FLOAT, {"batch", "3"});
    m.output("x");
    OnnxImportOptions opts;
    opts.input_shapes["x"] = {1, 3, 5};
    check_error(m.import(ctx, opts).status(), StatusCode::kInvalidArgument,
                "the shape given for input 'x' (1x3x5) does not fit");
  }
  SECTION("given shape disagreeing with a static dim") {
    OnnxModel m;
    m.input("x", TP::FLOAT, {2, 3});
    m.output("x");
    OnnxImportOptions opts;
    opts.input_shapes["x"] = {2, 4};
    check_error(m.import(ctx, opts).status(), StatusCode::kInvalidArgument, "does not fit");
  }
  SECTION("shape for a name that is no input") {
    OnnxImportOptions opts;
    opts.input_shapes["z"] = {1};
    check_error(relu_model().import(ctx, opts).status(), StatusCode::kInvalidArgument,
                "a shape is given for 'z', which is not an input of the model (inputs: x)");
  }
  SECTION("a shape of 2^62 elements or more") {
    // Size folds its input's element count at import, before any inference checks the shape:
    // 2 x (2^63 - 1) overflowed (found by the onnx fuzzer).
    OnnxModel m;
    m.input("x", TP::FLOAT, {0, 2, std::numeric_limits<int64_t>::max()});
    m.node("Size", {"x"}, {"n"}, "size");
    m.output("n");
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument,
                "input 'x' (f32[0x2x9223372036854775807]) has 2^62 elements or more");
  }
  SECTION("string input") {  // imported as str (docs/onnx.md, Strings)
    OnnxModel m;
    m.input("x", TP::STRING, {2});
    m.output("x");
    auto g = m.import(ctx);
    REQUIRE(g.ok());
    CHECK(g->value(g->inputs()[0]).type == TensorType{DType::str, {2}});
  }
  SECTION("sequence input") {
    OnnxModel m;
    auto* vi = m.graph().add_input();
    vi->set_name("seq");
    vi->mutable_type()->mutable_sequence_type();
    m.output("seq");
    check_error(m.import(ctx).status(), StatusCode::kUnimplemented, "input 'seq' is not a tensor");
  }
}

TEST_CASE("bad initializers", "[onnx][errors]") {
  Context ctx;
  auto model_with = [](const TP& t) {
    OnnxModel m;
    *m.graph().add_initializer() = t;
    m.output(t.name());
    return m;
  };
  SECTION("string tensor with raw data or the wrong count") {
    TP t;
    t.set_name("s");
    t.set_data_type(TP::STRING);
    t.add_dims(2);
    t.add_string_data("hello");
    check_error(model_with(t).import(ctx).status(), StatusCode::kInvalidArgument,
                "tensor 's' has 1 values in string_data, its shape 2 needs 2");
    t.set_raw_data("hello");
    check_error(model_with(t).import(ctx).status(), StatusCode::kInvalidArgument,
                "tensor 's' is a STRING tensor with raw or external data");
  }
  SECTION("complex tensor") {
    TP t;
    t.set_name("c");
    t.set_data_type(TP::COMPLEX64);
    check_error(model_with(t).import(ctx).status(), StatusCode::kUnimplemented,
                "tensor 'c' has element type COMPLEX64");
  }
  SECTION("raw_data of the wrong size") {
    TP t = tensor_proto("w", Tensor(DType::f32, {4}));
    t.mutable_raw_data()->resize(10);
    check_error(model_with(t).import(ctx).status(), StatusCode::kInvalidArgument,
                "tensor 'w' has 10 bytes of raw_data, its type f32[4] needs 16");
  }
  SECTION("typed field of the wrong length") {
    TP t;
    t.set_name("w");
    t.set_data_type(TP::INT64);
    t.add_dims(3);
    t.add_int64_data(1);
    check_error(model_with(t).import(ctx).status(), StatusCode::kInvalidArgument,
                "tensor 'w' has 1 values in int64_data, its shape 3 needs 3");
  }
  SECTION("huge claimed shape without data") {
    TP t;
    t.set_name("huge");
    t.set_data_type(TP::FLOAT);
    for (int i = 0; i < 3; ++i) t.add_dims(int64_t{1} << 20);
    check_error(model_with(t).import(ctx).status(), StatusCode::kInvalidArgument,
                "tensor 'huge' is impossibly large");
  }
  SECTION("negative dimension") {
    TP t;
    t.set_name("neg");
    t.set_data_type(TP::FLOAT);
    t.add_dims(-2);
    check_error(model_with(t).import(ctx).status(), StatusCode::kInvalidArgument,
                "tensor 'neg' has a negative dimension (-2)");
  }
}

TEST_CASE("bad external data", "[onnx][errors]") {
  Context ctx;
  const auto dir = fresh_test_dir("bad_external");
  write_bytes(dir / "short.bin", std::string(8, '\0'));
  auto model_at = [&](const std::string& location) {
    OnnxModel m;
    TP& t = m.initializer("w", Tensor(DType::f32, {4}));
    t.clear_raw_data();
    t.set_data_location(TP::EXTERNAL);
    auto* kv = t.add_external_data();
    kv->set_key("location");
    kv->set_value(location);
    m.output("w");
    return m.save(dir, "model.onnx");
  };
  SECTION("location escaping the folder with ..") {
    check_error(import_onnx_file(ctx, model_at("../secret.bin")).status(),
                StatusCode::kInvalidArgument,
                "tensor 'w': external data location '../secret.bin' is outside the model's "
                "folder");
  }
  SECTION("location escaping after normalisation") {
    check_error(import_onnx_file(ctx, model_at("sub/../../x.bin")).status(),
                StatusCode::kInvalidArgument, "is outside the model's folder");
  }
  SECTION("absolute location") {
    check_error(import_onnx_file(ctx, model_at("/etc/passwd")).status(),
                StatusCode::kInvalidArgument, "is outside the model's folder");
  }
  SECTION("file too short") {
    check_error(import_onnx_file(ctx, model_at("short.bin")).status(),
                StatusCode::kInvalidArgument,
                "tensor 'w': external data file 'short.bin' is too short: it has 8 bytes, the "
                "tensor needs bytes 0..16");
  }
  SECTION("missing file") {
    check_error(import_onnx_file(ctx, model_at("absent.bin")).status(), StatusCode::kNotFound,
                "tensor 'w': cannot open external data file 'absent.bin'");
  }
  SECTION("model in memory without a folder") {
    OnnxModel m;
    TP& t = m.initializer("w", Tensor(DType::f32, {4}));
    t.set_data_location(TP::EXTERNAL);
    auto* kv = t.add_external_data();
    kv->set_key("location");
    kv->set_value("short.bin");
    m.output("w");
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument,
                "refers to external data file 'short.bin', but the model was given in memory");
  }
}

TEST_CASE("bad nodes", "[onnx][errors]") {
  Context ctx;
  SECTION("too many inputs for a generic operator") {
    OnnxModel m;
    m.input("x", TP::FLOAT, {2});
    m.node("Relu", {"x", "x"}, {"y"}, "r");
    m.output("y");
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument,
                "Relu 'r': 2 inputs given, expected 1");
  }
  SECTION("too few inputs for a converted operator") {
    OnnxModel m;
    m.input("x", TP::FLOAT, {2});
    m.node("Reshape", {"x"}, {"y"}, "r");
    m.output("y");
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument,
                "Reshape 'r': 1 inputs given, expected 2 at opset 17");
  }
  SECTION("axes input before the opset that has it") {
    OnnxModel m(11);
    m.input("x", TP::FLOAT, {2});
    m.initializer("axes", Tensor::from_i64({1}, std::vector<int64_t>{0}));
    m.node("Squeeze", {"x", "axes"}, {"y"}, "sq");
    m.output("y");
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument,
                "Squeeze 'sq': 2 inputs given, expected 1 at opset 11");
  }
  SECTION("shape computed at run time, of floats") {
    OnnxModel m;
    m.input("x", TP::FLOAT, {2, 3});
    m.input("s", TP::FLOAT, {2});
    m.node("Reshape", {"x", "s"}, {"y"}, "r");
    m.output("y");
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument,
                "Reshape 'r': input 1 (shape) must be an integer list, got f32[2]");
  }
  SECTION("unknown attribute") {
    OnnxModel m = relu_model();
    attr_int(*m.graph().mutable_node(0), "bogus", 1);
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument,
                "Relu 'relu': unknown attribute 'bogus'");
  }
  SECTION("graph attribute") {
    OnnxModel m = relu_model();
    auto* a = m.graph().mutable_node(0)->add_attribute();
    a->set_name("body");
    a->set_type(onnx::AttributeProto::GRAPH);
    check_error(m.import(ctx).status(), StatusCode::kUnimplemented,
                "Relu 'relu': attribute 'body' is of kind GRAPH");
  }
  SECTION("shape inference failure names the node") {
    OnnxModel m;
    m.input("a", TP::FLOAT, {2, 3});
    m.input("b", TP::FLOAT, {4, 5});
    m.node("MatMul", {"a", "b"}, {"y"}, "mm");
    m.output("y");
    check_error(m.import(ctx).status(), StatusCode::kInvalidArgument, "MatMul 'mm'");
  }
  SECTION("Constant with a string value") {
    OnnxModel m;
    attr_string(m.node("Constant", {}, {"c"}, "k"), "value_string", "text");
    m.output("c");
    check_error(m.import(ctx).status(), StatusCode::kUnimplemented,
                "Constant 'k': attribute 'value_string' is not supported");
  }
  SECTION("Cast to an unsupported type") {
    OnnxModel m;
    m.input("x", TP::FLOAT, {2});
    attr_int(m.node("Cast", {"x"}, {"y"}, "c"), "to", TP::COMPLEX64);
    m.output("y");
    check_error(m.import(ctx).status(), StatusCode::kUnimplemented,
                "Cast 'c': target type has element type COMPLEX64");
  }
  SECTION("unnamed node is shown by its output") {
    OnnxModel m;
    m.input("x", TP::FLOAT, {2});
    m.node("Foo", {"x"}, {"foo_out"});
    m.output("foo_out");
    check_error(m.import(ctx).status(), StatusCode::kUnimplemented,
                "unsupported operator 'Foo' (node 'foo_out', opset 17)");
  }
}

TEST_CASE("training-only features are refused", "[onnx][errors]") {
  Context ctx;
  SECTION("BatchNormalization 9 statistics used") {
    OnnxModel m(9);  // before version 14 the training outputs are the running and saved ones
    m.input("x", TP::FLOAT, {1, 2, 2, 2});
    for (const char* n : {"s", "b", "m", "v"})
      m.initializer(n, Tensor::from_f32({2}, std::vector<float>{1, 1}));
    m.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y", "rm"}, "bn");
    m.output("y").output("rm");
    check_error(m.import(ctx).status(), StatusCode::kUnimplemented,
                "BatchNormalization 'bn': output 1 ('rm', training statistics) is used");
  }
  SECTION("BatchNormalization running statistics used") {
    OnnxModel m(14);
    m.input("x", TP::FLOAT, {1, 2, 2, 2});
    for (const char* n : {"s", "b", "m", "v"})
      m.initializer(n, Tensor::from_f32({2}, std::vector<float>{1, 1}));
    m.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y", "rm", "rv"}, "bn");
    m.node("Relu", {"rm"}, {"z"});
    m.output("y").output("z");
    check_error(m.import(ctx).status(), StatusCode::kUnimplemented,
                "BatchNormalization 'bn': output 1 ('rm', training statistics) is used");
  }
  SECTION("Dropout training_mode true") {
    OnnxModel m(13);
    m.input("x", TP::FLOAT, {2});
    Tensor yes(DType::boolean, {});
    yes.data<uint8_t>()[0] = 1;
    m.initializer("t", yes);
    m.node("Dropout", {"x", "", "t"}, {"y"}, "d");
    m.output("y");
    check_error(m.import(ctx).status(), StatusCode::kUnimplemented,
                "Dropout 'd': training_mode is true with a ratio other than 0");
  }
  SECTION("Dropout training_mode true with ratio 0 is the inference Dropout") {
    OnnxModel m(13);
    m.input("x", TP::FLOAT, {2});
    Tensor yes(DType::boolean, {});
    yes.data<uint8_t>()[0] = 1;
    m.initializer("t", yes);
    m.initializer("r", Tensor::from_f32({}, std::vector<float>{0.f}));
    m.node("Dropout", {"x", "r", "t"}, {"y"}, "d");
    m.output("y");
    auto g = m.import(ctx);
    REQUIRE(g.ok());
    REQUIRE(g->nodes().size() == 1);
    CHECK(g->nodes()[0].op_name() == "Dropout");
  }
}

TEST_CASE("corrupted bytes never crash the importer", "[onnx][errors]") {
  Context ctx;
  OnnxModel m(13);
  m.input("x", TP::FLOAT, {2, 3});
  m.initializer("shape", Tensor::from_i64({2}, std::vector<int64_t>{3, 2}));
  m.initializer("w", Tensor::from_f32({2}, std::vector<float>{0.5f, -1.f}));
  m.node("Reshape", {"x", "shape"}, {"r"}, "reshape");
  m.node("Add", {"r", "w"}, {"y"}, "add");
  attr_int(m.node("Cast", {"y"}, {"z"}, "cast"), "to", TP::INT32);
  m.output("z");
  const std::string good = m.bytes();
  REQUIRE(m.import(ctx).ok());
  int failures = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (int v : {0x00, 0xff, 0x7f, (static_cast<unsigned char>(good[i]) ^ 0x55)}) {
      std::string bad = good;
      bad[i] = static_cast<char>(v);
      auto g = import_onnx_buffer(
          ctx, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bad.data()), bad.size()));
      if (!g.ok()) {
        ++failures;
        CHECK_FALSE(g.status().message().empty());
      }
    }
  }
  CHECK(failures > 0);
}

}  // namespace
}  // namespace collage::testing
