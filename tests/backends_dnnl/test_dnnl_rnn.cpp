// dnnl conformance: LSTM, GRU (linear before reset or not) and RNN against the reference, every
// direction and layout, with and without biases and initial states (inputs or constants), any
// subset of the outputs; and the nodes oneDNN cannot run, which the backend must not claim.
#include <algorithm>
#include <catch2/catch.hpp>

#include "backends/common/module_kernel.h"
#include "collage/ops.h"
#include "collage/ops/recurrent.h"
#include "common/backend_check.h"
#include "common/test_util.h"
#include "dnnl_module.h"
#include "post_op_cases.h"

using namespace collage;
using namespace collage::testing;

namespace {

struct RnnCase {
  std::string op = "LSTM";
  std::string direction = "forward";
  int64_t layout = 0;
  int64_t linear_before_reset = 0;
  int64_t seq = 5, batch = 3, input = 4, hidden = 6;
  bool bias = true;
  // h_only: an LSTM given initial_h without initial_c.
  enum class State { none, input, constant, h_only } state = State::input;
  std::vector<bool> outputs = {true, true, true};  // Y, Y_h (, Y_c): graph outputs
  std::function<void(RecurrentAttrs&)> extra = nullptr;
  bool peepholes = false;
  bool variable_weights = false;
  int32_t lengths = -1;  // >= 0: a constant sequence_lens, this value for every batch item
};

int64_t gates(const std::string& op) {
  return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
}

Graph rnn_graph(const Context& ctx, const RnnCase& c) {
  GraphBuilder b(ctx, "rnn");
  const int64_t d = c.direction == "bidirectional" ? 2 : 1, g = gates(c.op), h = c.hidden;
  const Shape x = c.layout ? Shape{c.batch, c.seq, c.input} : Shape{c.seq, c.batch, c.input};
  const Shape state = c.layout ? Shape{c.batch, d, h} : Shape{d, c.batch, h};
  uint64_t seed = 100;
  auto constant = [&](const Shape& s, float scale = 0.5f) {
    return b.add_constant("c", random_f32(s, seed++, -scale, scale));
  };
  // Weights as inputs: the kernel rearranges them on every run.
  auto weights = [&](const char* name, const Shape& s) {
    return c.variable_weights ? b.add_input(name, {DType::f32, s}) : constant(s);
  };
  std::vector<ValueId> in = {b.add_input("X", {DType::f32, x})};
  in.push_back(weights("W", {d, g * h, c.input}));
  in.push_back(weights("R", {d, g * h, h}));
  in.push_back(c.bias ? weights("B", {d, 2 * g * h}) : kNoValue);
  if (c.lengths >= 0) {
    Tensor lens(DType::i32, {c.batch});
    std::fill_n(lens.data<int32_t>(), c.batch, c.lengths);
    in.push_back(b.add_constant("sequence_lens", lens));
  } else {
    in.push_back(kNoValue);
  }
  const int states = c.op == "LSTM" ? 2 : 1;
  for (int i = 0; i < states; ++i) {
    if (c.state == RnnCase::State::input || (c.state == RnnCase::State::h_only && i == 0))
      in.push_back(b.add_input(i == 0 ? "initial_h" : "initial_c", {DType::f32, state}));
    else if (c.state == RnnCase::State::constant)
      in.push_back(constant(state, 1.f));
    else
      in.push_back(kNoValue);
  }
  if (c.peepholes) in.push_back(constant({d, 3 * h}));
  while (!in.empty() && in.back() == kNoValue) in.pop_back();
  auto attrs = make_attrs<RecurrentAttrs>([&](RecurrentAttrs& a) {
    a.direction = c.direction;
    a.hidden_size = h;
    a.layout = c.layout;
    a.linear_before_reset = c.linear_before_reset;
    if (c.extra) c.extra(a);
  });
  auto outs = b.add_node(c.op, in, attrs, "rnn", c.op == "LSTM" ? 3 : 2);
  INFO(outs.status().ToString());
  REQUIRE(outs.ok());
  for (size_t i = 0; i < outs->size(); ++i)
    if (c.outputs[i]) b.add_output((*outs)[i]);
  auto graph = b.finish();
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  return *std::move(graph);
}

std::string describe(const RnnCase& c) {
  std::string s = c.op + (c.linear_before_reset ? " lbr" : "") + " " + c.direction + " layout " +
                  std::to_string(c.layout) + (c.bias ? " B" : " noB");
  s += c.state == RnnCase::State::none     ? " no-state"
       : c.state == RnnCase::State::input  ? " state-input"
       : c.state == RnnCase::State::h_only ? " initial_h-only"
                                           : " state-constant";
  s += " outputs";
  for (bool o : c.outputs) s += o ? "1" : "0";
  return s;
}

void check_rnn(const RnnCase& c) {
  Context ctx;
  Graph g = rnn_graph(ctx, c);
  GroupCheck check{.tolerance = 1e-4,
                   .elementwise = true,
                   .floor_fraction = 0.01,
                   .claim = true,
                   .threads = {1, 3}};
  // Weights are packed once at build: loading the record reorders nothing. The record is the
  // last build's (3 threads): a bidirectional layer, sequence first, on more than one thread (an
  // LSTM, or a cell with a million multiply-adds per step) runs its two directions side by side,
  // each on one thread, reading its slice of the weights packed for both.
  check.inspect = [c](const GroupResult& r, const Graph& group) {
    KernelDesc desc(r.record, group);
    const rt_dnnl::ProbeResult probe = rt_dnnl::probe_kernel(desc.desc());
    INFO(probe.error);
    REQUIRE(probe.error.empty());
    CHECK(probe.packed.empty());
    const bool side_by_side =
        std::any_of(probe.implementations.begin(), probe.implementations.end(),
                    [](const std::string& i) { return i.rfind("side by side", 0) == 0; });
    const bool threaded =
        c.op == "LSTM" || c.batch * gates(c.op) * c.hidden * (c.input + c.hidden) >= (1 << 20);
    CHECK(side_by_side == (threaded && c.direction == "bidirectional" && c.layout == 0));
  };
  CHECK(check_group(dnnl_backend(), g, check).origin == "dnnl.recurrent");
}

}  // namespace

TEST_CASE("dnnl rnn: every cell, direction and layout", "[dnnl][rnn]") {
  for (const char* op : {"LSTM", "GRU", "RNN"})
    for (int64_t lbr : {0, 1}) {
      if (lbr && std::string(op) != "GRU") continue;
      for (const char* dir : {"forward", "reverse", "bidirectional"})
        for (int64_t layout : {0, 1}) {
          RnnCase c;
          c.op = op;
          c.linear_before_reset = lbr;
          c.direction = dir;
          c.layout = layout;
          if (c.op != "LSTM") c.outputs = {true, true};
          DYNAMIC_SECTION(describe(c)) {
            check_rnn(c);
          }
        }
    }
}

TEST_CASE("dnnl rnn: optional inputs and any subset of the outputs", "[dnnl][rnn]") {
  for (const char* op : {"LSTM", "GRU"})
    for (const char* dir : {"forward", "bidirectional"})
      for (int64_t layout : {0, 1})
        for (auto state :
             {RnnCase::State::none, RnnCase::State::constant, RnnCase::State::h_only}) {
          RnnCase c;
          c.op = op;
          c.linear_before_reset = std::string(op) == "GRU" ? 1 : 0;
          c.direction = dir;
          c.layout = layout;
          c.state = state;
          c.bias = state == RnnCase::State::none;
          const size_t n = c.op == "LSTM" ? 3 : 2;
          for (unsigned mask = 1; mask < (1u << n); ++mask) {
            c.outputs.assign(n, false);
            for (size_t i = 0; i < n; ++i) c.outputs[i] = (mask >> i) & 1;
            DYNAMIC_SECTION(describe(c)) {
              check_rnn(c);
            }
          }
        }
}

TEST_CASE("dnnl rnn: weights and biases given at run time", "[dnnl][rnn]") {
  for (const char* op : {"LSTM", "GRU", "RNN"})
    for (int64_t lbr : {0, 1})
      for (bool bias : {true, false}) {
        if (lbr && std::string(op) != "GRU") continue;
        RnnCase c;
        c.op = op;
        c.linear_before_reset = lbr;
        c.direction = "bidirectional";
        c.bias = bias;
        c.variable_weights = true;
        if (c.op != "LSTM") c.outputs = {true, true};
        DYNAMIC_SECTION(describe(c)) {
          check_rnn(c);
        }
      }
}

TEST_CASE("dnnl rnn: batch 1, sizes of a real model", "[dnnl][rnn]") {
  for (const char* op : {"LSTM", "GRU"}) {
    RnnCase c;
    c.op = op;
    c.direction = "bidirectional";
    c.seq = 16, c.batch = 1, c.input = 32, c.hidden = 48;
    if (c.op != "LSTM") c.outputs = {true, true};
    DYNAMIC_SECTION(describe(c)) {
      check_rnn(c);
    }
  }
}

TEST_CASE("dnnl rnn: GRUs with a million multiply-adds per step, side by side", "[dnnl][rnn]") {
  // Built for several threads: each direction its own primitive on one thread.
  for (int64_t lbr : {0, 1}) {
    RnnCase c;
    c.op = "GRU";
    c.linear_before_reset = lbr;
    c.direction = "bidirectional";
    c.seq = 3, c.batch = 128, c.input = 64, c.hidden = 64;
    c.outputs = {true, true};
    DYNAMIC_SECTION(describe(c)) {
      check_rnn(c);
    }
  }
}

TEST_CASE("dnnl rnn: what oneDNN cannot run stays off the backend", "[dnnl][rnn]") {
  struct Refused {
    std::string name, why;
    RnnCase c;
  };
  auto with = [](std::function<void(RnnCase&)> f) {
    RnnCase c;
    f(c);
    return c;
  };
  const std::vector<Refused> cases = {
      {"clip", "clip", with([](RnnCase& c) { c.extra = [](RecurrentAttrs& a) { a.clip = 2.f; }; })},
      {"activations", "activations", with([](RnnCase& c) {
         c.extra = [](RecurrentAttrs& a) { a.activations = "Sigmoid,Relu,Tanh"; };
       })},
      {"peepholes", "peepholes", with([](RnnCase& c) { c.peepholes = true; })},
      {"sequence_lens shorter than the sequence", "sequence_lens",
       with([](RnnCase& c) { c.lengths = static_cast<int32_t>(c.seq - 1); })},
  };
  for (const Refused& r : cases) {
    DYNAMIC_SECTION(r.name) {
      Context ctx;
      Graph g = rnn_graph(ctx, r.c);
      const GroupAttempt a = try_group(dnnl_backend(), g);
      CHECK_FALSE(a.offered);
      INFO(a.build.ToString());
      CHECK(a.build.code() == absl::StatusCode::kInvalidArgument);
      CHECK_THAT(std::string(a.build.message()), Catch::Contains(r.why));
      CHECK_THAT(std::string(a.build.message()), Catch::Contains("LSTM 'rnn'"));
    }
  }
  SECTION("sequence_lens that all equal the sequence length are claimed") {
    RnnCase c;
    c.lengths = static_cast<int32_t>(c.seq);
    check_rnn(c);
  }
  SECTION("explicit default activations are claimed") {
    RnnCase c;
    c.op = "GRU";
    c.direction = "bidirectional";
    c.outputs = {true, true};
    c.extra = [](RecurrentAttrs& a) { a.activations = "Sigmoid,Tanh,Sigmoid,Tanh"; };
    check_rnn(c);
  }
}
