// Helpers for the GPU schedule tests: lower + generate + NVRTC-compile a schedule, CPU
// references, and the loop IR with its GPU bindings made serial (to run it on the CPU JIT).
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_codegen.h"
#include "codegen/cuda/gpu_schedules.h"
#include "codegen/cuda/nvrtc_compiler.h"
#include "collage/jit.h"

namespace collage::testing {

struct GpuCompiled {
  te::PrimFunc func;
  codegen::cuda::CudaKernel kernel;
  codegen::cuda::CompiledCuda image;
};

inline GpuCompiled compile_gpu(const codegen::cuda::GpuKernelDef& def, const std::string& name,
                               int arch = 90) {
  GpuCompiled c;
  absl::StatusOr<te::PrimFunc> f = codegen::cuda::lower_gpu(def, name);
  INFO((f.ok() ? std::string() : std::string(f.status().message())));
  REQUIRE(f.ok());
  c.func = *f;
  absl::StatusOr<codegen::cuda::CudaKernel> k = codegen::cuda::generate_cuda(*f);
  INFO((k.ok() ? std::string() : std::string(k.status().message())) << "\n" << te::to_string(*f));
  REQUIRE(k.ok());
  c.kernel = *k;
  codegen::cuda::NvrtcOptions o;
  o.arch = arch;
  o.cache_dir = std::filesystem::path();  // tests do not write to the user's cache
  absl::StatusOr<codegen::cuda::CompiledCuda> img = codegen::cuda::compile_cuda(*k, o);
  INFO((img.ok() ? std::string() : std::string(img.status().message())) << "\n" << k->source);
  REQUIRE(img.ok());
  c.image = *img;
  return c;
}

// The same loop IR with every GPU-bound loop run as a serial loop: the sequential meaning of the
// kernel, which the GPU must reproduce.
inline te::PrimFunc serialize_bindings(const te::PrimFunc& f) {
  struct Serial : te::IRMutator {
    using te::IRMutator::mutate;
    te::Stmt mutate_For(const te::ForNode& n, const te::Stmt& s) override {
      te::Stmt body = mutate(n.body);
      if (n.for_kind != te::ForKind::thread_bound && body.same_as(n.body)) return s;
      const te::ForKind k =
          n.for_kind == te::ForKind::thread_bound ? te::ForKind::serial : n.for_kind;
      return te::make_for(n.var, n.min, n.extent, k, body);
    }
  } serial;
  te::PrimFunc g = f;
  g.body = serial.mutate(f.body);
  return g;
}

// Runs the serialized loop IR of `f` on the CPU.
inline void run_on_cpu(const te::PrimFunc& f, std::vector<void*> args) {
  te::PrimFunc g = serialize_bindings(f);
  absl::StatusOr<std::unique_ptr<codegen::JitModule>> m = codegen::JitModule::compile({g});
  INFO((m.ok() ? std::string() : std::string(m.status().message())));
  REQUIRE(m.ok());
  absl::StatusOr<codegen::KernelFn> fn = (*m)->lookup(g.name);
  REQUIRE(fn.ok());
  (*fn)(args.data(), 0, 1);
}

inline std::vector<float> random_values(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

inline std::vector<float> matmul_reference(const std::vector<float>& a, const std::vector<float>& b,
                                           int64_t m, int64_t n, int64_t k) {
  std::vector<float> c(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t r = 0; r < k; ++r) s += double(a[i * k + r]) * b[r * n + j];
      c[i * n + j] = static_cast<float>(s);
    }
  }
  return c;
}

inline std::vector<float> softmax_reference(const std::vector<float>& x, int64_t rows,
                                            int64_t cols) {
  std::vector<float> y(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -INFINITY, s = 0;
    for (int64_t c = 0; c < cols; ++c) mx = std::max<double>(mx, x[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c) s += std::exp(double(x[r * cols + c]) - mx);
    for (int64_t c = 0; c < cols; ++c) {
      y[r * cols + c] = static_cast<float>(std::exp(double(x[r * cols + c]) - mx) / s);
    }
  }
  return y;
}

inline std::vector<float> layer_norm_reference(const std::vector<float>& x,
                                               const std::vector<float>& gamma,
                                               const std::vector<float>& beta, int64_t rows,
                                               int64_t cols, double eps) {
  std::vector<float> y(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c) mean += x[r * cols + c];
    mean /= cols;
    for (int64_t c = 0; c < cols; ++c) var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    var /= cols;
    for (int64_t c = 0; c < cols; ++c) {
      y[r * cols + c] =
          static_cast<float>((x[r * cols + c] - mean) / std::sqrt(var + eps) * gamma[c] + beta[c]);
    }
  }
  return y;
}

// NCHW convolution, groups 1.
inline std::vector<float> conv2d_reference(const std::vector<float>& x, const std::vector<float>& w,
                                           const codegen::cuda::Conv2dShape& c) {
  const int64_t oh = c.out_height(), ow = c.out_width();
  std::vector<float> y(c.batch * c.out_channels * oh * ow);
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t o = 0; o < c.out_channels; ++o) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          double s = 0;
          for (int64_t ci = 0; ci < c.in_channels; ++ci) {
            for (int64_t kh = 0; kh < c.kernel_h; ++kh) {
              for (int64_t kw = 0; kw < c.kernel_w; ++kw) {
                const int64_t ih = i * c.stride + kh - c.pad, iw = j * c.stride + kw - c.pad;
                if (ih < 0 || ih >= c.height || iw < 0 || iw >= c.width) continue;
                s += double(x[((n * c.in_channels + ci) * c.height + ih) * c.width + iw]) *
                     w[((o * c.in_channels + ci) * c.kernel_h + kh) * c.kernel_w + kw];
              }
            }
          }
          y[((n * c.out_channels + o) * oh + i) * ow + j] = static_cast<float>(s);
        }
      }
    }
  }
  return y;
}

// Depthwise NCHW convolution (one filter per channel).
inline std::vector<float> depthwise_reference(const std::vector<float>& x,
                                              const std::vector<float>& w,
                                              const codegen::cuda::Conv2dShape& c) {
  const int64_t oh = c.out_height(), ow = c.out_width();
  std::vector<float> y(c.batch * c.in_channels * oh * ow);
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t ch = 0; ch < c.in_channels; ++ch) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          double s = 0;
          for (int64_t kh = 0; kh < c.kernel_h; ++kh) {
            for (int64_t kw = 0; kw < c.kernel_w; ++kw) {
              const int64_t ih = i * c.stride + kh - c.pad, iw = j * c.stride + kw - c.pad;
              if (ih < 0 || ih >= c.height || iw < 0 || iw >= c.width) continue;
              s += double(x[((n * c.in_channels + ch) * c.height + ih) * c.width + iw]) *
                   w[(ch * c.kernel_h + kh) * c.kernel_w + kw];
            }
          }
          y[((n * c.in_channels + ch) * oh + i) * ow + j] = static_cast<float>(s);
        }
      }
    }
  }
  return y;
}

// max |a - b| / max(|b|, 1e-3) (inf on a size mismatch or a NaN).
inline double max_rel_error(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double e = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double(a[i]) - b[i]) / std::max(std::fabs(double(b[i])), 1e-3);
    if (std::isnan(d)) return INFINITY;
    e = std::max(e, d);
  }
  return e;
}

// max |a - b| / max |b|: the error relative to the output's scale (for sums whose elements
// may be near zero).
inline double max_scaled_error(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double e = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double(a[i]) - b[i]);
    if (std::isnan(d)) return INFINITY;
    e = std::max(e, d);
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return scale > 0 ? e / scale : e;
}

}  // namespace collage::testing
