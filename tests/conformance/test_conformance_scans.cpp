// Conformance of the scans and scatters (CumSum, CumProd, ScatterND, ScatterElements) and of the
// other nodes the dynamic module runs with static shapes (Pow of integers, MaxUnpool,
// TfIdfVectorizer, RNN/GRU/LSTM variants oneDNN does not take): every backend that claims the one-node graph (the dynamic module's kernels,
// native's tensor expressions) agrees with the reference executor (integers exactly), in process
// and from an artifact, over every axis, exclusive and reverse, each reduction with duplicate
// indices, and shapes large enough to split a scan into tasks.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "collage/compiler.h"
#include "collage/executor.h"
#include "collage/ops/indexing.h"
#include "collage/ops/pooling.h"
#include "collage/ops/recurrent.h"
#include "collage/ops/text.h"
#include "collage/reference.h"
#include "common/runtime_c_util.h"
#include "common/test_util.h"

namespace collage {
namespace {

// Integers in [-3, 4) (a product of a few hundred stays exact in f32 only if small: CumProd
// cases use short axes), floats in [-1, 1).
Tensor random_values(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor f = testing::random_f32(shape, seed, -3.f, 4.f);
  if (dtype == DType::f32) return testing::random_f32(shape, seed);
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const auto v = static_cast<int64_t>(std::floor(f.data<float>()[i]));
    switch (dtype) {
      case DType::f64: t.data<double>()[i] = f.data<float>()[i]; break;
      case DType::i32: t.data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case DType::i64: t.data<int64_t>()[i] = v; break;
      case DType::u32: t.data<uint32_t>()[i] = static_cast<uint32_t>(v + 3); break;
      default: FAIL("no values for " << dtype_name(dtype));
    }
  }
  return t;
}

// A one-node graph: graph inputs for `inputs`, constants for `constants` (after them).
Graph one_node(const Context& ctx, const std::string& op, const std::vector<Tensor>& inputs,
               const std::vector<Tensor>& constants, std::shared_ptr<const OpAttrs> attrs) {
  GraphBuilder b(ctx, op);
  std::vector<ValueId> in;
  for (size_t i = 0; i < inputs.size(); ++i)
    in.push_back(b.add_input("x" + std::to_string(i), inputs[i].type()));
  for (size_t i = 0; i < constants.size(); ++i)
    in.push_back(b.add_constant("c" + std::to_string(i), constants[i]));
  auto y = b.add(op, in, std::move(attrs), "op");
  REQUIRE(y.ok());
  b.add_output(*y);
  auto g = b.finish();
  REQUIRE(g.ok());
  return *std::move(g);
}

bool claims(const Backend& backend, const Graph& g) {
  GraphReachability reach(g);
  for (const Candidate& c : backend.candidates(g, reach))
    if (c.nodes.count() == g.nodes().size()) return true;
  return false;
}

void check_equal(const Tensor& actual, const Tensor& expected) {
  INFO(testing::describe_mismatch(actual, expected));
  REQUIRE(actual.type() == expected.type());
  if (actual.numel() == 0) return;
  // Floats within rounding (native's products may contract into fused multiply-adds).
  if (is_float(expected.dtype()))
    CHECK(testing::max_relative_error(actual, expected) < 1e-5);
  else
    CHECK(testing::max_relative_error(actual, expected) == 0);
}

// The backends that ran `g` in process and from an artifact, each checked against the reference
// (only backend `only`, when given).
std::vector<std::string> check_backends(const Compiler& compiler, const Graph& g,
                                        const std::vector<Tensor>& inputs,
                                        const std::string& only = "") {
  auto expected = run_reference(g, inputs);
  REQUIRE(expected.ok());
  std::vector<std::string> ran;
  for (const Backend* backend : compiler.backends().all()) {
    if (backend->name() == kReferenceBackend || !claims(*backend, g)) continue;
    if (!only.empty() && backend->name() != only) continue;
    INFO("on " << backend->name());
    Placement placement;
    PlacedGroup& group = placement.groups.emplace_back();
    group.nodes = NodeSet::of(g.nodes().size(), {0});
    group.backend = backend->name();
    BuildOptions build;
    build.num_threads = 2;
    auto model = compile_placement(compiler.context(), compiler.backends(), g, placement, build);
    INFO(model.status());
    REQUIRE(model.ok());
    auto out = model->run(inputs);
    INFO(out.status());
    REQUIRE(out.ok());
    REQUIRE(out->size() == expected->size());
    for (size_t o = 0; o < out->size(); ++o) check_equal((*out)[o], (*expected)[o]);

    auto bytes = compile_artifact(compiler.context(), compiler.backends(), g, placement);
    INFO(bytes.status());
    REQUIRE(bytes.ok());
    collage_load_options_t load;
    collage_load_options_init(&load);
    collage_module_t* m = nullptr;
    REQUIRE(testing::take_message(
                collage_module_load_memory(bytes->data(), bytes->size(), &load, &m)) == "");
    int32_t code = 0;
    std::string message;
    std::vector<Tensor> from_artifact = testing::run_module(m, inputs, &code, &message);
    collage_module_release(m);
    INFO(message);
    REQUIRE(from_artifact.size() == expected->size());
    for (size_t o = 0; o < from_artifact.size(); ++o) check_equal(from_artifact[o], (*expected)[o]);
    ran.push_back(backend->name());
  }
  return ran;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST_CASE("conformance: CumSum and CumProd agree with the reference on every backend",
          "[conformance][scan]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  struct Case {
    std::string op;
    Shape shape;
    DType dtype;
  };
  const std::vector<Case> cases = {
      {"CumSum", {3, 5, 7}, DType::f32},  {"CumSum", {3, 5, 7}, DType::i64},
      {"CumSum", {4, 6}, DType::i32},     {"CumSum", {4, 6}, DType::f64},
      {"CumSum", {4, 6}, DType::u32},     {"CumSum", {0, 5}, DType::f32},
      {"CumProd", {2, 3, 9}, DType::i64}, {"CumProd", {3, 4}, DType::f32},
      // 4 x 2,048 x 33 elements: the dynamic kernel runs several tasks, blocks of 256 and a rest.
      {"CumSum", {4, 2048, 33}, DType::i64},
  };
  int dynamic_runs = 0;
  for (const Case& c : cases)
    for (int64_t axis = -static_cast<int64_t>(c.shape.size());
         axis < static_cast<int64_t>(c.shape.size()); ++axis)
      for (int flags = 0; flags < 4; ++flags) {
        if (c.shape.size() == 3 && c.shape[1] == 2048 && (axis < 0 || flags % 3 != 0)) continue;
        auto attrs = std::make_shared<CumSumAttrs>();
        attrs->exclusive = flags & 1;
        attrs->reverse = flags >> 1;
        const Tensor x = random_values(c.dtype, c.shape, 5 + flags);
        INFO(c.op << " " << type_to_string(x.type()) << " axis " << axis << " exclusive "
                  << attrs->exclusive << " reverse " << attrs->reverse);
        // The axis a constant (as exporters write it), then an input given at run time.
        for (bool constant_axis : {true, false}) {
          const Tensor a = Tensor::scalar_i64(axis);
          const Graph g =
              constant_axis ? one_node(compiler->context(), c.op, {x}, {a}, attrs)
                            : one_node(compiler->context(), c.op, {x, a}, {}, attrs);
          const std::vector<std::string> ran =
              check_backends(*compiler, g, constant_axis ? std::vector<Tensor>{x}
                                                         : std::vector<Tensor>{x, a});
          CHECK(has(ran, "dynamic"));
          dynamic_runs += has(ran, "dynamic");
        }
      }
  CHECK(dynamic_runs > 100);
}

// Indices with duplicates (so the order of the updates shows) and negative entries.
Tensor row_indices(const Shape& shape, int64_t dim, uint64_t seed) {
  Tensor t(DType::i64, shape);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(-dim, dim - 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = pick(rng) / 2;
  return t;
}

TEST_CASE("conformance: ScatterND and ScatterElements agree with the reference on every backend",
          "[conformance][scatter]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  int dynamic_runs = 0;
  for (const char* reduction : {"none", "add", "mul", "max", "min"})
    for (DType dtype : {DType::f32, DType::i64, DType::i32, DType::f64}) {
      auto attrs = std::make_shared<ScatterAttrs>();
      attrs->reduction = reduction;
      INFO(reduction << " " << dtype_name(dtype));
      {
        // ScatterND: 12 rows of 5 into 9 x 5, and single elements into 9 x 5.
        const Tensor data = random_values(dtype, {9, 5}, 1);
        for (const Shape& idx_shape : {Shape{12, 1}, Shape{3, 4, 2}}) {
          Tensor idx = row_indices(idx_shape, 9, 2);
          if (idx_shape.back() == 2)
            for (int64_t i = 1; i < idx.numel(); i += 2) idx.data<int64_t>()[i] %= 5;
          Shape upd_shape(idx_shape.begin(), idx_shape.end() - 1);
          if (idx_shape.back() == 1) upd_shape.push_back(5);
          const Tensor upd = random_values(dtype, upd_shape, 3);
          const Graph g = one_node(compiler->context(), "ScatterND", {data, idx, upd}, {}, attrs);
          const std::vector<std::string> ran = check_backends(*compiler, g, {data, idx, upd});
          CHECK(has(ran, "dynamic"));
          dynamic_runs += has(ran, "dynamic");
        }
      }
      for (int64_t axis : {0, 1, -1}) {
        attrs->axis = axis;
        INFO("ScatterElements axis " << axis);
        const Tensor data = random_values(dtype, {6, 7}, 4);
        const Tensor idx = row_indices({5, 4}, axis == 0 ? 6 : 7, 5);
        const Tensor upd = random_values(dtype, {5, 4}, 6);
        const Graph g =
            one_node(compiler->context(), "ScatterElements", {data, idx, upd}, {}, attrs);
        const std::vector<std::string> ran = check_backends(*compiler, g, {data, idx, upd});
        CHECK(has(ran, "dynamic"));
        dynamic_runs += has(ran, "dynamic");
      }
    }
  CHECK(dynamic_runs == 5 * 4 * 5);
}

TEST_CASE("conformance: Pow of integers, MaxUnpool and TfIdfVectorizer run on the dynamic module",
          "[conformance][dynamic-static]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  // Pow: bases in [-3, 4), exponents in [-3, 4) (negative ones give 0, 1 or -1), broadcast; i64
  // powers that wrap.
  for (DType base : {DType::i32, DType::i64})
    for (DType exponent : {DType::i32, DType::i64}) {
      INFO("Pow " << dtype_name(base) << " ^ " << dtype_name(exponent));
      const Tensor x = random_values(base, {4, 5}, 7), y = random_values(exponent, {5}, 8);
      const Graph g = one_node(compiler->context(), "Pow", {x, y}, {}, nullptr);
      CHECK(has(check_backends(*compiler, g, {x, y}), "dynamic"));
    }
  // Powers past 2^63 wrap as the reference's do (OpenVINO's i64 Pow gives -2^31 for (2^20)^5,
  // where the wrapped value is 0, so only the module is held to it here).
  const Tensor big = Tensor::from_i64({3}, std::vector<int64_t>{3, -7, 1 << 20});
  const Tensor e = Tensor::from_i64({3}, std::vector<int64_t>{41, 40, 5});
  CHECK(has(check_backends(*compiler, one_node(compiler->context(), "Pow", {big, e}, {}, nullptr),
                           {big, e}, "dynamic"),
            "dynamic"));

  // MaxUnpool of a 2 x 2 max pool with stride 2 over 1 x 2 x 5 x 5 (a 4 x 4 block, so the last
  // row and column stay zero), then into a given output_shape.
  auto unpool = std::make_shared<MaxUnpoolAttrs>();
  unpool->kernel_shape = {2, 2};
  unpool->strides = {2, 2};
  const Tensor x = testing::random_f32({1, 2, 2, 2}, 9);
  const Tensor i = Tensor::from_i64({1, 2, 2, 2}, std::vector<int64_t>{0, 3, 9, 15, 17, 18, 24, 31});
  CHECK(has(check_backends(*compiler, one_node(compiler->context(), "MaxUnpool", {x, i}, {}, unpool),
                           {x, i}),
            "dynamic"));
  const Tensor shape = Tensor::from_i64({4}, std::vector<int64_t>{1, 2, 5, 5});
  CHECK(has(check_backends(*compiler,
                           one_node(compiler->context(), "MaxUnpool", {x, i}, {shape}, unpool),
                           {x, i}),
            "dynamic"));

  // TfIdfVectorizer: unigrams and bigrams with skips, in each mode, weighted.
  for (const char* mode : {"TF", "IDF", "TFIDF"}) {
    auto tfidf = std::make_shared<TfIdfVectorizerAttrs>();
    tfidf->mode = mode;
    tfidf->min_gram_length = 1;
    tfidf->max_gram_length = 2;
    tfidf->max_skip_count = 2;
    tfidf->ngram_counts = {0, 3};
    tfidf->pool_int64s = {2, 3, 5, 2, 3, 5, 7, 7, 2};
    tfidf->ngram_indexes = {0, 1, 2, 3, 4, 5};
    tfidf->weights = {0.5f, 1.f, 2.f, 0.25f, 3.f, 1.5f};
    INFO("TfIdfVectorizer " << mode);
    const Tensor tokens = Tensor::from_i64({2, 6}, std::vector<int64_t>{2, 3, 5, 7, 7, 2,  //
                                                                        5, 5, 2, 3, 9, 7});
    CHECK(has(check_backends(*compiler,
                             one_node(compiler->context(), "TfIdfVectorizer", {tokens}, {}, tfidf),
                             {tokens}),
              "dynamic"));
  }
}

// One recurrent node over X [seq 4, batch 3, input 5] with weights as constants, its first
// outputs.size() outputs of (Y, Y_h, Y_c) made, the graph's outputs those with a name (an unread
// Y is no output of the group, so the kernel makes Y_h first).
Graph recurrent_graph(const Context& ctx, const std::string& op, int gates,
                      std::shared_ptr<RecurrentAttrs> attrs, bool peepholes, bool lengths,
                      const std::vector<std::string>& outputs) {
  const int64_t D = attrs->direction == "bidirectional" ? 2 : 1, H = attrs->hidden_size;
  GraphBuilder b(ctx, op);
  const ValueId x = b.add_input("x", {DType::f32, {4, 3, 5}});
  std::vector<ValueId> in = {
      x, b.add_constant("w", testing::random_f32({D, gates * H, 5}, 21)),
      b.add_constant("r", testing::random_f32({D, gates * H, H}, 22)),
      b.add_constant("b", testing::random_f32({D, 2 * gates * H}, 23)),
      lengths ? b.add_constant("lens", [] {
        Tensor t(DType::i32, {3});
        const int32_t v[] = {4, 2, 0};
        std::copy(v, v + 3, t.data<int32_t>());
        return t;
      }())
              : kNoValue,
      b.add_constant("h0", testing::random_f32({D, 3, H}, 24))};
  if (op == "LSTM") {
    in.push_back(b.add_constant("c0", testing::random_f32({D, 3, H}, 25)));
    in.push_back(peepholes ? b.add_constant("p", testing::random_f32({D, 3 * H}, 26)) : kNoValue);
  }
  auto ys = b.add_node(op, in, attrs, "rnn", static_cast<int>(outputs.size()));
  REQUIRE(ys.ok());
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].empty()) b.add_output((*ys)[i]);
  auto g = b.finish();
  REQUIRE(g.ok());
  return *std::move(g);
}

TEST_CASE("conformance: LSTM with peepholes, clip and sequence lengths runs on the dynamic module",
          "[conformance][recurrent]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  const Tensor x = testing::random_f32({4, 3, 5}, 20);
  for (const char* direction : {"forward", "reverse", "bidirectional"}) {
    auto attrs = std::make_shared<RecurrentAttrs>();
    attrs->hidden_size = 6;
    attrs->direction = direction;
    attrs->clip = 0.7f;
    INFO("LSTM " << direction);
    // Y left out (as test_lstm_with_peepholes does), then all three.
    for (const std::vector<std::string>& outs :
         {std::vector<std::string>{"", "y_h"}, std::vector<std::string>{"y", "y_h", "y_c"}}) {
      const Graph g = recurrent_graph(compiler->context(), "LSTM", 4, attrs, true, true, outs);
      CHECK(has(check_backends(*compiler, g, {x}), "dynamic"));
    }
  }
  // GRU with activations oneDNN does not take, and an RNN with a scaled tanh.
  auto gru = std::make_shared<RecurrentAttrs>();
  gru->hidden_size = 6;
  gru->activations = "HardSigmoid,Softsign";
  gru->activation_alpha = {0.3f};
  gru->activation_beta = {0.4f};
  CHECK(has(check_backends(*compiler,
                           recurrent_graph(compiler->context(), "GRU", 3, gru, false, true,
                                           {"y", "y_h"}),
                           {x}),
            "dynamic"));
  auto rnn = std::make_shared<RecurrentAttrs>();
  rnn->hidden_size = 6;
  rnn->activations = "ScaledTanh";
  rnn->activation_alpha = {1.5f};
  rnn->activation_beta = {0.5f};
  CHECK(has(check_backends(*compiler,
                           recurrent_graph(compiler->context(), "RNN", 1, rnn, false, false,
                                           {"y"}),
                           {x}),
            "dynamic"));
}

TEST_CASE("the dynamic module's scatter names an index out of range", "[conformance][scatter]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  const Tensor data = Tensor::from_f32({3, 2}, std::vector<float>{1, 2, 3, 4, 5, 6});
  const Tensor idx = Tensor::from_i64({1, 1}, std::vector<int64_t>{3});
  const Tensor upd = Tensor::from_f32({1, 2}, std::vector<float>{7, 8});
  const Graph g = one_node(compiler->context(), "ScatterND", {data, idx, upd}, {},
                           std::make_shared<ScatterAttrs>());
  Placement placement;
  PlacedGroup& group = placement.groups.emplace_back();
  group.nodes = NodeSet::of(1, {0});
  group.backend = "dynamic";
  auto model = compile_placement(compiler->context(), compiler->backends(), g, placement, {});
  REQUIRE(model.ok());
  auto out = model->run({data, idx, upd});
  REQUIRE_FALSE(out.ok());
  CHECK_THAT(std::string(out.status().message()),
             Catch::Contains("index 3 is out of range for axis 0 of size 3"));
}

}  // namespace
}  // namespace collage
