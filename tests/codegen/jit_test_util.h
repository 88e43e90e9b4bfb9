// Helpers for code-generation tests: lower + JIT-compile a schedule, run a kernel's tasks, random
// data.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "collage/jit.h"
#include "collage/schedule.h"

namespace collage::testing {

struct Compiled {
  std::unique_ptr<codegen::JitModule> module;
  codegen::KernelFn fn = nullptr;
  te::PrimFunc func;
};

inline Compiled compile_kernel(const te::Schedule& s, const std::vector<te::Tensor>& args,
                               const std::string& name = "kernel") {
  absl::StatusOr<te::PrimFunc> f = te::lower(s, args, name);
  INFO((f.ok() ? std::string() : std::string(f.status().message())));
  REQUIRE(f.ok());
  absl::StatusOr<std::unique_ptr<codegen::JitModule>> m = codegen::JitModule::compile({*f});
  INFO((m.ok() ? std::string() : std::string(m.status().message())) << "\n" << te::to_string(*f));
  REQUIRE(m.ok());
  Compiled c;
  c.module = std::move(*m);
  absl::StatusOr<codegen::KernelFn> fn = c.module->lookup(name);
  REQUIRE(fn.ok());
  c.fn = *fn;
  c.func = *f;
  return c;
}

// Runs tasks 0..task_count-1 in order on this thread.
inline void run_tasks(const Compiled& c, std::vector<void*> args, int task_count = 1) {
  for (int t = 0; t < task_count; ++t) c.fn(args.data(), t, task_count);
}

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

}  // namespace collage::testing
