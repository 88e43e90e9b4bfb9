// Implementation of the TE operator test helpers.
#include "te_ops_test_util.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>

#include "collage/backends/native.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "core/str_cat.h"

namespace collage::testing {

std::vector<Tensor> random_graph_inputs(const Graph& g, uint64_t seed, float lo, float hi) {
  std::vector<Tensor> inputs;
  for (ValueId v : g.inputs()) {
    const TensorType& t = g.value(v).type;
    Tensor f = random_f32(t.shape, seed++, lo, hi);
    if (t.dtype == DType::f32) {
      inputs.push_back(f);
    } else if (is_integer(t.dtype)) {
      Tensor i(t.dtype, t.shape);
      std::mt19937 rng(static_cast<uint32_t>(seed));
      Tensor i64(DType::i64, t.shape);
      for (int64_t k = 0; k < i64.numel(); ++k) i64.data<int64_t>()[k] = static_cast<int64_t>(rng() % 5);
      inputs.push_back(i64.cast(t.dtype));
    } else if (t.dtype == DType::boolean) {
      Tensor b(DType::boolean, t.shape);
      for (int64_t k = 0; k < b.numel(); ++k) static_cast<uint8_t*>(b.raw())[k] = f.data<float>()[k] > 0;
      inputs.push_back(b);
    } else {
      inputs.push_back(f.cast(t.dtype));
    }
  }
  return inputs;
}

const Backend& native_backend() {
  static const std::unique_ptr<Backend> backend = make_native_backend();
  return *backend;
}

absl::StatusOr<std::vector<Tensor>> run_native_group(const Backend& backend, const Graph& g,
                                                     const std::vector<Tensor>& inputs,
                                                     int threads) {
  BuildOptions options;
  options.num_threads = threads;
  auto kernel = backend.build(g, options);
  if (!kernel.ok()) return kernel.status();
  std::vector<void*> args;
  for (const Tensor& t : inputs) args.push_back(const_cast<void*>(t.raw()));
  std::vector<Tensor> outputs;
  for (ValueId v : g.outputs()) {
    const TensorType& t = g.value(v).type;
    Tensor out(t.dtype, t.shape);
    std::memset(out.raw(), 0xff, t.bytes());  // NaN for floats, -1 for integers
    outputs.push_back(out);
    args.push_back(out.raw());
  }
  for (int32_t task = 0; task < (*kernel)->task_count(); ++task)
    if (absl::Status s = (*kernel)->run_task(args.data(), task); !s.ok()) return s;
  return outputs;
}

void check_native(const Graph& g, const NativeCheck& check) {
  std::vector<Tensor> inputs = random_graph_inputs(g, check.seed, check.lo, check.hi);
  auto expected = run_reference(g, inputs);
  INFO(expected.status().ToString());
  REQUIRE(expected.ok());
  for (int threads : {1, 3, 8}) {
    INFO("threads " << threads);
    auto actual = run_native_group(native_backend(), g, inputs, threads);
    INFO(actual.status().ToString());
    REQUIRE(actual.ok());
    REQUIRE(actual->size() == expected->size());
    for (size_t o = 0; o < actual->size(); ++o) {
      const Tensor& a = (*actual)[o];
      const Tensor& e = (*expected)[o];
      INFO("output " << o << ": " << describe_mismatch(a.cast(DType::f32), e.cast(DType::f32)));
      REQUIRE(a.type() == e.type());
      if (is_float(e.dtype()) && check.elementwise)
        CHECK(max_relative_error(a.cast(DType::f32), e.cast(DType::f32)) <= check.tolerance);
      else if (is_float(e.dtype()))
        CHECK(max_scaled_error(a.cast(DType::f32), e.cast(DType::f32)) <= check.tolerance);
      else
        CHECK(a.identical(e));
    }
  }
}

Graph single_op_graph(const Context& ctx, const std::string& op,
                      const std::vector<TensorType>& inputs, std::shared_ptr<const OpAttrs> attrs,
                      const std::vector<Tensor>& constants, int num_outputs) {
  GraphBuilder b(ctx, op);
  std::vector<ValueId> ins;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i < constants.size() && !constants[i].empty())
      ins.push_back(b.add_constant(str_cat("c", i), constants[i]));
    else
      ins.push_back(b.add_input(str_cat("x", i), inputs[i]));
  }
  auto outs = b.add_node(op, ins, std::move(attrs), "op", num_outputs);
  INFO(outs.status().ToString());
  REQUIRE(outs.ok());
  for (ValueId v : *outs) b.add_output(v);
  auto g = b.finish();
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return std::move(*g);
}

}  // namespace collage::testing
