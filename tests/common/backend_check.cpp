// The backend test harness: random inputs, graph construction, runtime-module instances and the
// whole-graph check against the reference executor.
#include "common/backend_check.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

#include "backends/common/module_kernel.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "core/str_cat.h"

namespace collage::testing {

Tensor random_tensor(const TensorType& type, uint64_t seed, float lo, float hi) {
  Tensor f = random_f32(type.shape, seed, lo, hi);
  if (type.dtype == DType::f32) return f;
  if (is_integer(type.dtype)) {
    std::mt19937 rng(static_cast<uint32_t>(seed + 1));  // apart from random_f32's seed
    Tensor i64(DType::i64, type.shape);
    for (int64_t k = 0; k < i64.numel(); ++k)
      i64.data<int64_t>()[k] = static_cast<int64_t>(rng() % 5);
    return i64.cast(type.dtype);
  }
  if (type.dtype == DType::boolean) {
    Tensor b(DType::boolean, type.shape);
    for (int64_t k = 0; k < b.numel(); ++k)
      static_cast<uint8_t*>(b.raw())[k] = f.data<float>()[k] > 0;
    return b;
  }
  return f.cast(type.dtype);
}

std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed, float lo, float hi) {
  std::vector<Tensor> inputs;
  for (ValueId v : g.inputs()) inputs.push_back(random_tensor(g.value(v).type, seed++, lo, hi));
  return inputs;
}

TestGraph::TestGraph()
    : ctx_(std::make_unique<Context>()), b_(std::make_unique<GraphBuilder>(*ctx_, "test")) {}

ValueId TestGraph::input(Shape shape, DType dtype, float lo, float hi) {
  ranges_.push_back({lo, hi});
  return b_->add_input(str_cat("x", ranges_.size()), {dtype, std::move(shape)});
}

ValueId TestGraph::constant(Shape shape, float lo, float hi) {
  return constant(random_f32(shape, 1000 + seed_++, lo, hi));
}

ValueId TestGraph::constant(Tensor t) {
  return b_->add_constant("c", std::move(t));
}

ValueId TestGraph::op(std::string_view name, std::vector<ValueId> inputs,
                      std::shared_ptr<const OpAttrs> attrs) {
  auto v = b_->add(name, std::move(inputs), std::move(attrs));
  INFO(v.status().ToString());
  REQUIRE(v.ok());
  return *v;
}

const Shape& TestGraph::shape(ValueId v) const {
  return b_->value(v).type.shape;
}

Graph TestGraph::finish(ValueId out) {
  b_->add_output(out);
  auto g = b_->finish();
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return *std::move(g);
}

std::vector<Tensor> TestGraph::feed(const Graph& g) const {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < g.inputs().size(); ++i)
    inputs.push_back(
        random_tensor(g.value(g.inputs()[i]).type, 7 + i, ranges_[i].lo, ranges_[i].hi));
  return inputs;
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

ModuleInstance::ModuleInstance(const collage_rt_module_v1_t* module, const KernelRecord& record,
                               const Graph& group)
    : module_(module), group_(group) {
  KernelDesc desc(record, group);
  char err[512] = {0};
  if (module->kernel_create(&desc.desc(), &instance_, err, sizeof err) != 0) {
    error_ = err;
    instance_ = nullptr;
  }
}

ModuleInstance::~ModuleInstance() {
  module_->kernel_destroy(instance_);
}

namespace {

// Output tensors of `g` filled with all-ones bytes (NaN for floats, -1 for integers), so that an
// element a kernel forgets to write shows up; their addresses appended to `args`.
std::vector<Tensor> poisoned_outputs(const Graph& g, std::vector<void*>& args) {
  std::vector<Tensor> outputs;
  for (ValueId v : g.outputs()) {
    const TensorType& t = g.value(v).type;
    Tensor out(t.dtype, t.shape);
    std::memset(out.raw(), 0xff, t.bytes());
    outputs.push_back(out);
    args.push_back(out.raw());
  }
  return outputs;
}

}  // namespace

std::vector<Tensor> ModuleInstance::run(const std::vector<Tensor>& inputs, int32_t task_count,
                                        int threads) {
  std::vector<void*> args;
  for (const Tensor& t : inputs) args.push_back(const_cast<void*>(t.raw()));
  std::vector<Tensor> outputs = poisoned_outputs(group_, args);
  std::vector<std::string> errors(task_count);
  auto run_tasks = [&](int first, int step) {
    for (int32_t t = first; t < task_count; t += step) {
      char err[512] = {0};
      if (module_->kernel_run(instance_, args.data(), t, task_count, err, sizeof err) != 0)
        errors[t] = err[0] ? err : "failed without a message";
    }
  };
  if (threads <= 1) {
    run_tasks(0, 1);
  } else {
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i) pool.emplace_back(run_tasks, i, threads);
    for (std::thread& t : pool) t.join();
  }
  for (const std::string& e : errors)
    if (!e.empty()) {
      error_ = e;
      return {};
    }
  return outputs;
}

bool claims_whole_graph(const Backend& backend, const Graph& g, std::string* origin) {
  GraphReachability reach(g);
  for (const Candidate& c : backend.candidates(g, reach))
    if (c.nodes.count() == g.nodes().size()) {
      if (origin) *origin = c.origin;
      return true;
    }
  return false;
}

namespace {

// The error of `actual` against `expected` by the check's measure (0 or +inf for integers and
// bools: they must be identical).
double error_of(const Tensor& actual, const Tensor& expected, const GroupCheck& check) {
  if (!is_float(expected.dtype()))
    return actual.identical(expected) ? 0 : std::numeric_limits<double>::infinity();
  const Tensor a = actual.cast(DType::f32), e = expected.cast(DType::f32);
  if (!check.elementwise) return max_scaled_error(a, e);
  double floor = 1e-3;
  if (check.floor_fraction > 0) {
    // Values below this fraction of the output's largest magnitude are compared against it:
    // a library that sums in another order moves every result by a few ulps of the magnitudes
    // summed, so results that cancel to nearly zero carry a large error relative to themselves.
    double scale = 0;
    for (int64_t i = 0; i < e.numel(); ++i) {
      const double v = std::fabs(e.data<float>()[i]);
      if (std::isfinite(v)) scale = std::max(scale, v);
    }
    floor = std::max(1e-6, check.floor_fraction * scale);
  }
  return max_relative_error(a, e, floor);
}

// Compares every output with the reference; returns the largest error.
double compare(const std::vector<Tensor>& actual, const std::vector<Tensor>& expected,
               const GroupCheck& check) {
  REQUIRE(actual.size() == expected.size());
  double worst = 0;
  for (size_t o = 0; o < actual.size(); ++o) {
    const Tensor& a = actual[o];
    const Tensor& e = expected[o];
    REQUIRE(a.type() == e.type());
    const double error = error_of(a, e, check);
    INFO("output " << o << ": " << describe_mismatch(a.cast(DType::f32), e.cast(DType::f32)));
    CHECK(error <= check.tolerance);
    worst = std::max(worst, error);
  }
  return worst;
}

}  // namespace

GroupAttempt try_group(const Backend& backend, const Graph& g) {
  GroupAttempt a;
  a.offered = claims_whole_graph(backend, g);
  a.build = backend.build(g, {}).status();
  return a;
}

GroupResult check_group(const Backend& backend, const Graph& g, const GroupCheck& check) {
  INFO(print_graph(g) << "on " << backend.name());
  GroupResult result;
  if (check.claim) REQUIRE(claims_whole_graph(backend, g, &result.origin));
  INFO("claimed by " << result.origin);
  const std::vector<Tensor> inputs =
      check.inputs.empty() ? random_inputs(g, check.seed, check.lo, check.hi) : check.inputs;
  auto expected = run_reference(g, inputs);
  INFO(expected.status().ToString());
  REQUIRE(expected.ok());

  std::vector<Tensor> in_process;
  int32_t in_process_tasks = 0;
  for (int threads : check.threads) {
    INFO("threads " << threads);
    BuildOptions options;
    options.num_threads = threads;
    auto kernel = backend.build(g, options);
    INFO(kernel.status().ToString());
    REQUIRE(kernel.ok());
    std::vector<void*> args;
    for (const Tensor& t : inputs) args.push_back(const_cast<void*>(t.raw()));
    in_process = poisoned_outputs(g, args);
    in_process_tasks = (*kernel)->task_count();
    REQUIRE(in_process_tasks >= 1);
    for (int32_t task = 0; task < in_process_tasks; ++task) {
      absl::Status s = (*kernel)->run_task(args.data(), task);
      INFO("task " << task << ": " << s.ToString());
      REQUIRE(s.ok());
    }
    result.error = std::max(result.error, compare(in_process, *expected, check));
    result.record = (*kernel)->record();
  }
  if (check.inspect) check.inspect(result, g);
  if (!check.module) return result;

  // The last record through the runtime module's C table, with other task splits and on threads.
  CHECK(result.record.module == check.module->name);
  ModuleInstance instance(check.module, result.record, g);
  INFO(instance.error());
  REQUIRE(instance.ok());
  const int32_t tasks = instance.task_count();
  CHECK(tasks == in_process_tasks);
  for (int32_t split : {1, 2, 3, 7, tasks, tasks + 5}) {
    INFO("task count " << split);
    std::vector<Tensor> again = instance.run(inputs, split);
    INFO(instance.error());
    REQUIRE(again.size() == in_process.size());
    for (size_t o = 0; o < again.size(); ++o) CHECK(again[o].identical(in_process[o]));
  }
  std::vector<Tensor> threaded = instance.run(inputs, tasks, 4);
  INFO(instance.error());
  REQUIRE(threaded.size() == in_process.size());
  for (size_t o = 0; o < threaded.size(); ++o) CHECK(threaded[o].identical(in_process[o]));
  return result;
}

}  // namespace collage::testing
