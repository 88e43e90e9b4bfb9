// Implementation of the Eigen backend test helpers.
#include "eigen_test_util.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <thread>

#include "backends/common/module_kernel.h"
#include "collage/backends/eigen.h"
#include "collage/ops.h"
#include "collage/reference.h"
#include "collage/subgraph.h"
#include "common/test_util.h"
#include "eigen_module.h"

namespace collage::testing {

std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed, float lo, float hi) {
  std::vector<Tensor> inputs;
  for (ValueId v : g.inputs()) inputs.push_back(random_f32(g.value(v).type.shape, seed++, lo, hi));
  return inputs;
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

std::vector<Tensor> ModuleInstance::run(const std::vector<Tensor>& inputs, int32_t task_count,
                                        int threads) {
  std::vector<Tensor> outputs;
  std::vector<void*> args;
  for (const Tensor& t : inputs) args.push_back(const_cast<void*>(t.raw()));
  for (ValueId v : group_.outputs()) {
    const TensorType& t = group_.value(v).type;
    // NaN-filled, so an element a kernel forgets to write shows up.
    Tensor out = Tensor(t.dtype, t.shape);
    for (int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = std::nanf("");
    outputs.push_back(out);
    args.push_back(out.raw());
  }
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

bool eigen_claims_whole_graph(const Graph& g) {
  const auto backend = make_eigen_backend();
  GraphReachability reach(g);
  for (const Candidate& c : backend->candidates(g, reach))
    if (c.nodes.count() == g.nodes().size()) return true;
  return false;
}

void check_eigen_group(const Graph& g, const EigenCheck& check) {
  INFO(print_graph(g));
  REQUIRE(eigen_claims_whole_graph(g));
  const auto backend = make_eigen_backend();
  auto kernel = backend->build(g, {});
  INFO(kernel.status().ToString());
  REQUIRE(kernel.ok());
  CHECK((*kernel)->record().module == "eigen");

  const std::vector<Tensor> inputs = random_inputs(g, check.seed, check.lo, check.hi);
  auto expected = run_reference(g, inputs);
  REQUIRE(expected.ok());
  REQUIRE(expected->size() == 1);

  // Through the Kernel interface, with the kernel's own task count.
  std::vector<void*> args;
  for (const Tensor& t : inputs) args.push_back(const_cast<void*>(t.raw()));
  const TensorType& out_type = g.value(g.outputs()[0]).type;
  Tensor out(out_type.dtype, out_type.shape);
  args.push_back(out.raw());
  const int32_t tasks = (*kernel)->task_count();
  REQUIRE(tasks >= 1);
  for (int32_t t = 0; t < tasks; ++t) REQUIRE((*kernel)->run_task(args.data(), t).ok());
  INFO(describe_mismatch(out, (*expected)[0]));
  CHECK(max_scaled_error(out, (*expected)[0]) <= check.tolerance);
  if (check.elementwise) CHECK(max_relative_error(out, (*expected)[0]) <= check.tolerance);

  // The same record through the module's C table, with other task splits and on threads.
  ModuleInstance instance(rt_eigen::module_table(), (*kernel)->record(), g);
  INFO(instance.error());
  REQUIRE(instance.ok());
  CHECK(instance.task_count() == tasks);
  for (int32_t split : {1, 2, 3, 7, tasks, tasks + 5}) {
    INFO("task count " << split);
    std::vector<Tensor> again = instance.run(inputs, split);
    INFO(instance.error());
    REQUIRE(again.size() == 1);
    CHECK(again[0].identical(out));
  }
  std::vector<Tensor> threaded = instance.run(inputs, tasks, 4);
  REQUIRE(threaded.size() == 1);
  CHECK(threaded[0].identical(out));
}

}  // namespace collage::testing

namespace collage::testing {
namespace {

// A constant of `shape` with values in [lo, hi).
ValueId constant(GraphBuilder& b, const std::string& name, const Shape& shape, float lo, float hi) {
  const uint64_t seed = stable_hash(name + shape_to_string(shape));
  return b.add_constant(name, random_f32(shape, seed, lo, hi));
}

Shape last_dim(const Shape& s) {
  return s.empty() ? Shape{} : Shape{s.back()};
}

EpilogueStep unary(std::string op, std::shared_ptr<const OpAttrs> attrs = nullptr,
                   std::string name = "") {
  if (name.empty()) name = op;
  return {name,
          [op, attrs](GraphBuilder& b, ValueId x, const Shape&) { return *b.add(op, {x}, attrs); }};
}

// x op c, or c op x when `first`, with c a constant of `cshape(shape)`.
EpilogueStep binary(std::string op, std::string name, std::function<Shape(const Shape&)> cshape,
                    bool first, float lo = -1.f, float hi = 1.f) {
  return {name, [=](GraphBuilder& b, ValueId x, const Shape& shape) {
            ValueId c = constant(b, name, cshape(shape), lo, hi);
            return first ? *b.add(op, {c, x}) : *b.add(op, {x, c});
          }};
}

}  // namespace

std::vector<EpilogueStep> activation_steps() {
  return {
      unary("Relu"),
      unary("Sigmoid"),
      unary("Tanh"),
      unary("Gelu"),
      unary("Gelu", make_attrs<GeluAttrs>([](GeluAttrs& a) { a.approximate = "tanh"; }),
            "Gelu(tanh)"),
      unary("Erf"),
      unary("Neg"),
      unary("Abs"),
      unary("LeakyRelu", make_attrs<LeakyReluAttrs>([](LeakyReluAttrs& a) { a.alpha = 0.2f; })),
      unary("HardSigmoid", make_attrs<HardSigmoidAttrs>([](HardSigmoidAttrs& a) {
              a.alpha = 0.3f;
              a.beta = 0.4f;
            })),
      unary("HardSwish"),
      unary("Clip", make_attrs<ClipAttrs>([](ClipAttrs& a) {
              a.min = -0.25f;
              a.max = 0.5f;
            })),
      unary("Exp"),
  };
}

std::vector<EpilogueStep> epilogue_steps() {
  std::vector<EpilogueStep> steps = activation_steps();
  auto chain = [](std::string name, std::string first, std::string second) {
    return EpilogueStep{name, [first, second](GraphBuilder& b, ValueId x, const Shape&) {
                          return *b.add(second, {*b.add(first, {x})});
                        }};
  };
  steps.push_back(chain("Sigmoid,Log", "Sigmoid", "Log"));
  steps.push_back(chain("Exp,Sqrt", "Exp", "Sqrt"));
  steps.push_back(chain("Exp,Reciprocal", "Exp", "Reciprocal"));
  auto scalar = [](const Shape&) { return Shape{}; };
  auto one = [](const Shape&) { return Shape{1}; };
  steps.push_back(binary("Add", "Add(x,bias)", last_dim, false));
  steps.push_back(binary("Add", "Add(bias,x)", last_dim, true));
  steps.push_back(binary("Add", "Add(x,[1])", one, false));
  steps.push_back(binary("Sub", "Sub(x,bias)", last_dim, false));
  steps.push_back(binary("Sub", "Sub(bias,x)", last_dim, true));
  steps.push_back(binary("Mul", "Mul(x,scalar)", scalar, false));
  steps.push_back(binary("Mul", "Mul(scale,x)", last_dim, true));
  steps.push_back(binary("Div", "Div(x,bias)", last_dim, false, 0.5f, 1.5f));
  steps.push_back(binary("Pow", "Pow(x,2)", scalar, false, 2.f, 2.f));
  steps.push_back(binary("Pow", "Pow(base,x)", last_dim, true, 0.5f, 2.f));
  steps.push_back(binary("PRelu", "PRelu(x,slope)", last_dim, false));
  steps.push_back({"Add(x,residual)", [](GraphBuilder& b, ValueId x, const Shape& shape) {
                     ValueId r = b.add_input("residual", {DType::f32, shape});
                     return *b.add("Add", {x, r});
                   }});
  steps.push_back({"Mul(residual,x)", [](GraphBuilder& b, ValueId x, const Shape& shape) {
                     ValueId r = b.add_input("residual", {DType::f32, shape});
                     return *b.add("Mul", {r, x});
                   }});
  return steps;
}

EpilogueStep find_step(const std::string& name) {
  for (EpilogueStep& s : epilogue_steps())
    if (s.name == name) return s;
  FAIL("no epilogue step " << name);
  return {};
}

ValueId add_steps(GraphBuilder& b, ValueId x, const Shape& shape,
                  const std::vector<EpilogueStep>& steps) {
  for (const EpilogueStep& s : steps) x = s.add(b, x, shape);
  return x;
}

}  // namespace collage::testing
