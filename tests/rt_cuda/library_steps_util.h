// Helpers for the library-step tests: the CPU references of GemmStep and ConvStep (in double,
// each element with the scale its error is judged against), the comparison, and running a
// program once through ProgramRunner.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "cuda_program.h"
#include "program_runner.h"

namespace collage::testing {

// What a result should be: each element's value, and its scale, the root of the sum of the
// squares of the terms that add up to it. fp32 accumulation stays orders of magnitude below
// 1e-4 of that scale; TF32 inputs (10-bit mantissas) land near 4e-4 of it, so a 1e-4 tolerance
// tells the two apart.
struct Expected {
  std::vector<double> value, scale;
};

// The row-major GEMM that `s` describes on host copies of its operands, each vector starting at
// its operand's offset; `c` is C before the step (read where beta is not zero, kept elsewhere).
inline Expected gemm_reference(const rt_cuda::GemmStep& s, const std::vector<float>& a,
                               const std::vector<float>& b, const std::vector<float>& c) {
  Expected e{std::vector<double>(c.begin(), c.end()), std::vector<double>(c.size(), 0.0)};
  for (int64_t t = 0; t < s.batch; ++t) {
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        double sum = 0, squares = 0;
        for (int64_t r = 0; r < s.k; ++r) {
          const float av = a[t * s.stride_a + (s.trans_a ? r * s.lda + i : i * s.lda + r)];
          const float bv = b[t * s.stride_b + (s.trans_b ? j * s.ldb + r : r * s.ldb + j)];
          const double term = double(av) * bv;
          sum += term;
          squares += term * term;
        }
        const size_t at = t * s.stride_c + i * s.ldc + j;
        const double old = s.beta == 0 ? 0.0 : double(s.beta) * c[at];
        e.value[at] = double(s.alpha) * sum + old;
        e.scale[at] = std::sqrt(double(s.alpha) * s.alpha * squares + old * old);
      }
    }
  }
  return e;
}

// act(conv2d(x, w) + bias) as `s` describes it, NCHW.
inline Expected conv_reference(const rt_cuda::ConvStep& s, const std::vector<float>& x,
                               const std::vector<float>& w, const std::vector<float>& bias) {
  const int64_t oh = s.out_h(), ow = s.out_w(), cpg = s.c / s.groups, opg = s.o / s.groups;
  Expected e{std::vector<double>(s.n * s.o * oh * ow), std::vector<double>(s.n * s.o * oh * ow)};
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t o = 0; o < s.o; ++o) {
      const int64_t c0 = o / opg * cpg;
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xo = 0; xo < ow; ++xo) {
          double sum = 0, squares = 0;
          for (int64_t ci = 0; ci < cpg; ++ci) {
            for (int64_t ky = 0; ky < s.kh; ++ky) {
              const int64_t iy = y * s.stride_h - s.pad_h + ky * s.dilation_h;
              if (iy < 0 || iy >= s.h) continue;
              for (int64_t kx = 0; kx < s.kw; ++kx) {
                const int64_t ix = xo * s.stride_w - s.pad_w + kx * s.dilation_w;
                if (ix < 0 || ix >= s.w) continue;
                const double term = double(x[((n * s.c + c0 + ci) * s.h + iy) * s.w + ix]) *
                                    w[((o * cpg + ci) * s.kh + ky) * s.kw + kx];
                sum += term;
                squares += term * term;
              }
            }
          }
          if (s.has_bias) {
            sum += bias[o];
            squares += double(bias[o]) * bias[o];
          }
          const size_t at = ((n * s.o + o) * oh + y) * ow + xo;
          e.value[at] = s.activation == rt_cuda::ConvActivation::relu ? std::max(sum, 0.0) : sum;
          e.scale[at] = std::sqrt(squares);
        }
      }
    }
  }
  return e;
}

// Checks every element of `got` against `want` within `tolerance` times its scale (exactly where
// the scale is zero: elements the step must leave alone).
inline void check_close(const std::vector<float>& got, const Expected& want,
                        double tolerance = 1e-4) {
  REQUIRE(got.size() == want.value.size());
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double error = std::fabs(got[i] - want.value[i]);
    if (!(error <= tolerance * want.scale[i])) {
      if (bad++ == 0) first = i;
    } else if (want.scale[i] > 0) {
      worst = std::max(worst, error / want.scale[i]);
    }
  }
  INFO(bad << " of " << got.size() << " elements off; first at " << first << ": got " << got[first]
           << ", want " << want.value[first] << " (scale " << want.scale[first]
           << "); worst passing error " << worst << " of the scale");
  CHECK(bad == 0);
}

// Readies `program` for `args` (inputs then outputs, host vectors of the arguments' sizes) and
// `constants`, and runs it once: the inputs copied in, the outputs written. Empty on success;
// `*runner` keeps the runner for further runs.
inline std::string run_program(const rt_cuda::GpuProgram& program, int num_inputs,
                               const std::vector<std::vector<float>*>& args,
                               const std::vector<const std::vector<float>*>& constants,
                               std::unique_ptr<rt_cuda::ProgramRunner>* runner) {
  std::vector<const void*> constant_data;
  std::vector<uint64_t> constant_bytes;
  for (const std::vector<float>* c : constants) {
    constant_data.push_back(c->data());
    constant_bytes.push_back(4 * c->size());
  }
  std::vector<uint64_t> arg_bytes;
  std::vector<void*> arg_data;
  for (std::vector<float>* a : args) {
    arg_bytes.push_back(4 * a->size());
    arg_data.push_back(a->data());
  }
  if (std::string e = rt_cuda::ProgramRunner::create(program, arg_bytes, num_inputs, constant_data,
                                                     constant_bytes, runner);
      !e.empty())
    return "create: " + e;
  if (std::string e = (*runner)->run(arg_data.data()); !e.empty()) return "run: " + e;
  return {};
}

}  // namespace collage::testing
