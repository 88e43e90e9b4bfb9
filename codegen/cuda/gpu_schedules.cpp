// The GPU schedules: matmul (shared-memory tiles, register blocking), elementwise chains, row
// reductions and softmax (warp reductions of 32 per-thread partial results).
#include "codegen/cuda/gpu_schedules.h"

#include <limits>

#include "core/str_cat.h"

namespace collage::codegen::cuda {

namespace {

constexpr int64_t kWarp = 32;

absl::Status check_sizes(const char* what, std::initializer_list<int64_t> sizes) {
  for (int64_t s : sizes) {
    if (s <= 0) return absl::InvalidArgumentError(str_cat(what, ": sizes must be positive"));
  }
  return absl::OkStatus();
}

// Stage `t` computed by the ty x tx threads of a block together (a tile staged in shared
// memory): its matrix axes (first, first + 1) fused and spread over threadIdx.y/x.
// Rows are copied 4 elements at a time (one float4 where the addresses are aligned).
void cooperative_load(te::Schedule& s, const te::Tensor& t, int first, int64_t ty, int64_t tx) {
  te::Stage st = s[t];
  auto [col, lanes] = st.split(t.axis(first + 1), 4);
  st.vectorize(lanes);
  te::IterVar f = st.fuse(t.axis(first), col);
  auto [f1, x] = st.split(f, tx);
  auto [f2, y] = st.split(f1, ty);
  st.bind(y, "threadIdx.y").bind(x, "threadIdx.x");
}

// op over `k` in [0, ceil(cols / 32)) of value(c) for c = k * 32 + t < cols (identity beyond).
te::Expr strided_part(te::ReduceOp op, int64_t cols, const te::Var& t,
                      const std::function<te::Expr(te::Expr)>& value, const std::string& name) {
  te::IterVar k = te::reduce_axis({0, (cols + kWarp - 1) / kWarp}, name);
  te::Expr c = k.var() * kWarp + t;
  te::Expr v =
      te::select(c < cols, value(te::minimum(c, cols - 1)), te::reduce_identity(op, DType::f32));
  switch (op) {
    case te::ReduceOp::sum:
      return te::sum(v, {k});
    case te::ReduceOp::max:
      return te::max(v, {k});
    case te::ReduceOp::min:
      return te::min(v, {k});
    case te::ReduceOp::prod:
      return te::prod(v, {k});
  }
  return te::Expr();
}

te::Expr reduce_over(te::ReduceOp op, te::Expr v, te::IterVar axis) {
  switch (op) {
    case te::ReduceOp::sum:
      return te::sum(v, {axis});
    case te::ReduceOp::max:
      return te::max(v, {axis});
    case te::ReduceOp::min:
      return te::min(v, {axis});
    case te::ReduceOp::prod:
      return te::prod(v, {axis});
  }
  return te::Expr();
}

// A [rows, 32] stage of per-thread partial results, computed at `at` of `consumer` by 32 threads.
void bind_partials(te::Schedule& s, const te::Tensor& partial, const te::Tensor& consumer,
                   const te::IterVar& at) {
  s[partial].compute_at(s[consumer], at);
  s[partial].bind(partial.axis(1), "threadIdx.x");
}

}  // namespace

namespace {

// C[(b,) m, n] = A[(b,) m, k] * B[(b,) k, n]; batch 0 means no batch dimension.
// A (batched) GEMM C[(b,) i, j] = sum_r A(b, i, r) * B(b, r, j) whose operands are element
// functions of the kernel's inputs (plain matrices, or an im2col view for convolutions).
struct GemmSpec {
  const char* what = "";
  int64_t batch = 0;  // 0: no batch dimension
  int64_t m = 0, n = 0, k = 0;
  std::vector<te::Tensor> inputs;  // kernel parameters before C
  std::function<te::Expr(te::Expr b, te::Expr i, te::Expr r)> a;
  std::function<te::Expr(te::Expr b, te::Expr r, te::Expr j)> b;
  DenseEpilogue epilogue;  // C[(b,) i, j] = epilogue(acc[(b,) i, j], i, j)
};

absl::StatusOr<GpuKernelDef> gemm_def(const GemmSpec& g, const MatmulTiling& t) {
  const char* what = g.what;
  if (absl::Status st = check_sizes(what, {g.batch > 0 ? g.batch : 1, g.m, g.n, g.k, t.block_m,
                                           t.block_n, t.block_k, t.thread_m, t.thread_n});
      !st.ok()) {
    return st;
  }
  if (t.block_m % t.thread_m != 0 || t.block_n % t.thread_n != 0) {
    return absl::InvalidArgumentError(str_cat(what, ": block tile ", t.block_m, "x", t.block_n,
                                              " is not a multiple of the thread tile ", t.thread_m,
                                              "x", t.thread_n));
  }
  const int64_t ty = t.block_m / t.thread_m, tx = t.block_n / t.thread_n;
  const bool batched = g.batch > 0;
  auto shape = [&](int64_t r, int64_t c) { return batched ? Shape{g.batch, r, c} : Shape{r, c}; };
  const size_t o = batched ? 1 : 0;  // index of the first matrix axis
  auto batch_of = [&](const std::vector<te::Var>& v) {
    return batched ? te::Expr(v[0]) : te::make_int(DType::i64, 0);
  };
  // Element (row, col) of a staged or accumulated tensor laid out by shape().
  auto at = [&](const te::Tensor& T, const std::vector<te::Var>& v, te::Expr r, te::Expr c) {
    return batched ? T(v[0], r, c) : T(r, c);
  };
  te::Tensor As = te::compute(
      shape(g.m, g.k),
      [&](const std::vector<te::Var>& v) { return g.a(batch_of(v), v[o], v[o + 1]); }, "A_shared");
  te::Tensor Bs = te::compute(
      shape(g.k, g.n),
      [&](const std::vector<te::Var>& v) { return g.b(batch_of(v), v[o], v[o + 1]); }, "B_shared");
  te::IterVar r = te::reduce_axis({0, g.k}, "k");
  te::Tensor acc = te::compute(
      shape(g.m, g.n),
      [&](const std::vector<te::Var>& v) {
        return te::sum(at(As, v, v[o], r) * at(Bs, v, r, v[o + 1]), {r});
      },
      g.epilogue ? "C_local" : "C");
  te::Tensor C = acc;
  if (g.epilogue) {
    C = te::compute(
        shape(g.m, g.n),
        [&](const std::vector<te::Var>& v) {
          return g.epilogue(at(acc, v, v[o], v[o + 1]), v[o], v[o + 1]);
        },
        "C");
    if (C.dtype() != DType::f32) {
      return absl::InvalidArgumentError(
          str_cat(what, ": the epilogue gives ", dtype_name(C.dtype()), ", expected f32"));
    }
  }
  GpuKernelDef def{te::create_schedule({C}), g.inputs};
  def.args.push_back(C);
  te::Schedule& s = def.schedule;
  // The accumulator stage (the epilogue's operand, or a cache of C).
  te::Tensor Cl = g.epilogue ? acc : s.cache_write(C);
  const int io = static_cast<int>(o);
  // C: block tile, thread tile, then the thread's own elements.
  auto [by, ii] = s[C].split(C.axis(io), t.block_m);
  auto [bx, jj] = s[C].split(C.axis(io + 1), t.block_n);
  auto [thy, im] = s[C].split(ii, t.thread_m);
  auto [thx, jn] = s[C].split(jj, t.thread_n);
  std::vector<te::IterVar> order = {by, bx, thy, thx, im, jn};
  if (batched) {
    order.insert(order.begin(), C.axis(0));
    s[C].bind(C.axis(0), "blockIdx.z");
  }
  s[C].reorder(order);
  s[C].bind(by, "blockIdx.y").bind(bx, "blockIdx.x").bind(thy, "threadIdx.y");
  s[C].bind(thx, "threadIdx.x");
  // The accumulator: a thread_m x thread_n register tile per thread.
  s[Cl].compute_at(s[C], thx);
  auto [ko, ki] = s[Cl].split(Cl.reduce_axis(0), t.block_k);
  s[Cl].reorder({ko, ki, Cl.axis(io), Cl.axis(io + 1)});
  s[Cl].unroll(Cl.axis(io)).unroll(Cl.axis(io + 1));
  // Per step of k, the block stages its A and B tiles in shared memory.
  s[As].compute_at(s[Cl], ko);
  s[Bs].compute_at(s[Cl], ko);
  cooperative_load(s, As, io, ty, tx);
  cooperative_load(s, Bs, io, ty, tx);
  if (!s.status().ok()) return s.status();
  return def;
}

GemmSpec plain_gemm(const char* what, int64_t batch, int64_t m, int64_t n, int64_t k) {
  GemmSpec g;
  g.what = what;
  g.batch = batch;
  g.m = m;
  g.n = n;
  g.k = k;
  const bool batched = batch > 0;
  te::Tensor A = te::placeholder(batched ? Shape{batch, m, k} : Shape{m, k}, DType::f32, "A");
  te::Tensor B = te::placeholder(batched ? Shape{batch, k, n} : Shape{k, n}, DType::f32, "B");
  g.inputs = {A, B};
  g.a = [A, batched](te::Expr b, te::Expr i, te::Expr r) { return batched ? A(b, i, r) : A(i, r); };
  g.b = [B, batched](te::Expr b, te::Expr r, te::Expr j) { return batched ? B(b, r, j) : B(r, j); };
  return g;
}

}  // namespace

absl::StatusOr<GpuKernelDef> gpu_matmul(int64_t m, int64_t n, int64_t k, const MatmulTiling& t) {
  return gemm_def(plain_gemm("gpu_matmul", 0, m, n, k), t);
}

absl::StatusOr<GpuKernelDef> gpu_dense(int64_t m, int64_t n, int64_t k,
                                       const std::vector<te::Tensor>& extra_inputs,
                                       const DenseEpilogue& epilogue, const MatmulTiling& t) {
  if (!epilogue) return absl::InvalidArgumentError("gpu_dense: no epilogue given");
  GemmSpec g = plain_gemm("gpu_dense", 0, m, n, k);
  g.inputs.insert(g.inputs.end(), extra_inputs.begin(), extra_inputs.end());
  g.epilogue = epilogue;
  return gemm_def(g, t);
}

absl::StatusOr<GpuKernelDef> gpu_batch_matmul(int64_t batch, int64_t m, int64_t n, int64_t k,
                                              const MatmulTiling& t) {
  if (batch <= 0) return absl::InvalidArgumentError("gpu_batch_matmul: sizes must be positive");
  return gemm_def(plain_gemm("gpu_batch_matmul", batch, m, n, k), t);
}

absl::StatusOr<GpuKernelDef> gpu_conv2d(const Conv2dShape& c,
                                        const std::vector<te::Tensor>& extra_inputs,
                                        const DenseEpilogue& epilogue, const MatmulTiling& t) {
  if (absl::Status st =
          check_sizes("gpu_conv2d", {c.batch, c.in_channels, c.height, c.width, c.out_channels,
                                     c.kernel_h, c.kernel_w, c.stride});
      !st.ok()) {
    return st;
  }
  const int64_t oh = c.out_height(), ow = c.out_width();
  if (c.pad < 0 || oh <= 0 || ow <= 0) {
    return absl::InvalidArgumentError(str_cat("gpu_conv2d: padding ", c.pad, " and kernel ",
                                              c.kernel_h, "x", c.kernel_w, " on ", c.height, "x",
                                              c.width, " give an empty output"));
  }
  const int64_t khw = c.kernel_h * c.kernel_w;
  te::Tensor X = te::placeholder({c.batch, c.in_channels, c.height, c.width}, DType::f32, "X");
  te::Tensor W =
      te::placeholder({c.out_channels, c.in_channels, c.kernel_h, c.kernel_w}, DType::f32, "W");
  GemmSpec g;
  g.what = "gpu_conv2d";
  g.batch = c.batch;
  g.m = c.out_channels;
  g.n = oh * ow;
  g.k = c.in_channels * khw;
  g.inputs = {X, W};
  g.inputs.insert(g.inputs.end(), extra_inputs.begin(), extra_inputs.end());
  g.epilogue = epilogue;
  // A = the weights as [out_channels, in_channels * kh * kw].
  g.a = [=](te::Expr, te::Expr o, te::Expr r) {
    return W(o, te::floordiv(r, khw), te::floordiv(te::floormod(r, khw), c.kernel_w),
             te::floormod(r, c.kernel_w));
  };
  // B = the im2col view of image b: [in_channels * kh * kw, oh * ow], zero in the padding.
  g.b = [=](te::Expr b, te::Expr r, te::Expr p) {
    te::Expr ih =
        te::floordiv(p, ow) * c.stride + te::floordiv(te::floormod(r, khw), c.kernel_w) - c.pad;
    te::Expr iw = te::floormod(p, ow) * c.stride + te::floormod(r, c.kernel_w) - c.pad;
    te::Expr inside = ih >= 0 && ih < c.height && iw >= 0 && iw < c.width;
    te::Expr v = X(b, te::floordiv(r, khw), te::maximum(te::minimum(ih, c.height - 1), 0),
                   te::maximum(te::minimum(iw, c.width - 1), 0));
    return te::select(inside, v, 0.0f);
  };
  return gemm_def(g, t);
}

absl::StatusOr<GpuKernelDef> gpu_depthwise_conv2d(const Conv2dShape& c, int64_t threads) {
  if (absl::Status st = check_sizes(
          "gpu_depthwise_conv2d",
          {c.batch, c.in_channels, c.height, c.width, c.kernel_h, c.kernel_w, c.stride, threads});
      !st.ok()) {
    return st;
  }
  const int64_t oh = c.out_height(), ow = c.out_width();
  if (c.out_channels != c.in_channels || c.pad < 0 || oh <= 0 || ow <= 0 || threads > 1024) {
    return absl::InvalidArgumentError(str_cat(
        "gpu_depthwise_conv2d: needs out_channels == in_channels (", c.out_channels, " vs ",
        c.in_channels, "), a non-negative padding, a non-empty output and at most 1024 threads"));
  }
  te::Tensor X = te::placeholder({c.batch, c.in_channels, c.height, c.width}, DType::f32, "X");
  te::Tensor W = te::placeholder({c.in_channels, 1, c.kernel_h, c.kernel_w}, DType::f32, "W");
  te::IterVar kh = te::reduce_axis({0, c.kernel_h}, "kh");
  te::IterVar kw = te::reduce_axis({0, c.kernel_w}, "kw");
  te::Tensor Y = te::compute(
      {c.batch, c.in_channels, oh, ow},
      [&](te::Var n, te::Var ch, te::Var i, te::Var j) {
        te::Expr ih = i * c.stride + kh.var() - c.pad, iw = j * c.stride + kw.var() - c.pad;
        te::Expr inside = ih >= 0 && ih < c.height && iw >= 0 && iw < c.width;
        te::Expr x = X(n, ch, te::maximum(te::minimum(ih, c.height - 1), 0),
                       te::maximum(te::minimum(iw, c.width - 1), 0));
        return te::sum(te::select(inside, x, 0.0f) * W(ch, 0, kh, kw), {kh, kw});
      },
      "Y");
  GpuKernelDef def{te::create_schedule({Y}), {X, W, Y}};
  te::Schedule& s = def.schedule;
  te::Tensor Yl = s.cache_write(Y);
  te::Stage st = s[Y];
  te::IterVar f = st.fuse(st.fuse(st.fuse(Y.axis(0), Y.axis(1)), Y.axis(2)), Y.axis(3));
  auto [b, t] = st.split(f, threads);
  st.bind(b, "blockIdx.x").bind(t, "threadIdx.x");
  s[Yl].compute_at(st, t);
  s[Yl].unroll(Yl.reduce_axis(0)).unroll(Yl.reduce_axis(1));
  if (!s.status().ok()) return s.status();
  return def;
}

absl::StatusOr<GpuKernelDef> gpu_elementwise(const te::Tensor& out,
                                             const std::vector<te::Tensor>& inputs,
                                             int64_t threads) {
  if (!out.defined() || out.op_kind() != te::OpKind::compute || out.ndim() == 0) {
    return absl::InvalidArgumentError("gpu_elementwise: the output must be a compute of rank >= 1");
  }
  if (threads <= 0 || threads > 1024 || threads % kWarp != 0) {
    return absl::InvalidArgumentError(
        str_cat("gpu_elementwise '", out.name(), "': ", threads,
                " threads per block (expected a multiple of 32 up to 1024)"));
  }
  GpuKernelDef def{te::create_schedule({out}), inputs};
  def.args.push_back(out);
  te::Schedule& s = def.schedule;
  for (const te::Tensor& t : s.stage_tensors()) {
    bool is_input = false;
    for (const te::Tensor& in : inputs) is_input |= in.same_as(t);
    if (!is_input && !t.same_as(out) && t.op_kind() == te::OpKind::compute) {
      s[t].compute_inline();
    }
  }
  te::Stage st = s[out];
  te::IterVar f = out.axis(0);
  for (int d = 1; d < out.ndim(); ++d) f = st.fuse(f, out.axis(d));
  const int64_t lanes = out.shape().back() % 4 == 0 && out.dtype() == DType::f32 ? 4 : 1;
  if (lanes > 1) {
    auto [f1, v] = st.split(f, lanes);
    st.vectorize(v);
    f = f1;
  }
  auto [b, t] = st.split(f, threads);
  st.bind(b, "blockIdx.x").bind(t, "threadIdx.x");
  if (!s.status().ok()) return s.status();
  return def;
}

absl::StatusOr<GpuKernelDef> gpu_row_reduce(int64_t rows, int64_t cols, te::ReduceOp op) {
  if (absl::Status st = check_sizes("gpu_row_reduce", {rows, cols}); !st.ok()) return st;
  te::Tensor X = te::placeholder({rows, cols}, DType::f32, "X");
  te::Tensor P = te::compute(
      {rows, kWarp},
      [&](te::Var i, te::Var t) {
        return strided_part(
            op, cols, t, [&](te::Expr c) { return X(i, c); }, "k");
      },
      "partial");
  te::IterVar w = te::reduce_axis({0, kWarp}, "lane");
  te::Tensor out = te::compute(
      {rows}, [&](te::Var i) { return reduce_over(op, P(i, w), w); }, "out");
  GpuKernelDef def{te::create_schedule({out}), {X, out}};
  te::Schedule& s = def.schedule;
  s[out].bind(out.axis(0), "blockIdx.x");
  bind_partials(s, P, out, out.axis(0));
  if (!s.status().ok()) return s.status();
  return def;
}

absl::StatusOr<GpuKernelDef> gpu_softmax(int64_t rows, int64_t cols) {
  if (absl::Status st = check_sizes("gpu_softmax", {rows, cols}); !st.ok()) return st;
  te::Tensor X = te::placeholder({rows, cols}, DType::f32, "X");
  te::Tensor MP = te::compute(
      {rows, kWarp},
      [&](te::Var i, te::Var t) {
        return strided_part(
            te::ReduceOp::max, cols, t, [&](te::Expr c) { return X(i, c); }, "k");
      },
      "max_partial");
  te::IterVar w1 = te::reduce_axis({0, kWarp}, "lane");
  te::Tensor M = te::compute(
      {rows}, [&](te::Var i) { return te::max(MP(i, w1), {w1}); }, "row_max");
  te::Tensor EP = te::compute(
      {rows, kWarp},
      [&](te::Var i, te::Var t) {
        return strided_part(
            te::ReduceOp::sum, cols, t, [&](te::Expr c) { return te::exp(X(i, c) - M(i)); }, "k");
      },
      "sum_partial");
  te::IterVar w2 = te::reduce_axis({0, kWarp}, "lane");
  te::Tensor S = te::compute(
      {rows}, [&](te::Var i) { return te::sum(EP(i, w2), {w2}); }, "row_sum");
  te::Tensor Y = te::compute(
      {rows, cols}, [&](te::Var i, te::Var j) { return te::exp(X(i, j) - M(i)) / S(i); }, "Y");

  GpuKernelDef def{te::create_schedule({Y}), {X, M, Y}};
  te::Schedule& s = def.schedule;
  // Pass 1 (one block per row): the row maximum, written to the workspace.
  s[M].bind(M.axis(0), "blockIdx.x");
  bind_partials(s, MP, M, M.axis(0));
  // Pass 2 (the same block): the sum of exponentials, then the normalised row.
  s[Y].bind(Y.axis(0), "blockIdx.x");
  auto [jo, jt] = s[Y].split(Y.axis(1), kWarp);
  s[Y].bind(jt, "threadIdx.x");
  s[S].compute_at(s[Y], Y.axis(0));
  bind_partials(s, EP, S, S.axis(0));
  if (!s.status().ok()) return s.status();
  return def;
}

absl::StatusOr<GpuKernelDef> gpu_layer_norm(int64_t rows, int64_t cols, float epsilon) {
  if (absl::Status st = check_sizes("gpu_layer_norm", {rows, cols}); !st.ok()) return st;
  if (!(epsilon >= 0.0f)) {
    return absl::InvalidArgumentError(
        str_cat("gpu_layer_norm: epsilon ", double(epsilon), " must be non-negative"));
  }
  te::Tensor X = te::placeholder({rows, cols}, DType::f32, "X");
  te::Tensor gamma = te::placeholder({cols}, DType::f32, "gamma");
  te::Tensor beta = te::placeholder({cols}, DType::f32, "beta");
  const float inv_cols = 1.0f / static_cast<float>(cols);
  te::Tensor SP = te::compute(
      {rows, kWarp},
      [&](te::Var i, te::Var t) {
        return strided_part(
            te::ReduceOp::sum, cols, t, [&](te::Expr c) { return X(i, c); }, "k");
      },
      "sum_partial");
  te::IterVar w1 = te::reduce_axis({0, kWarp}, "lane");
  te::Tensor RS = te::compute(
      {rows}, [&](te::Var i) { return te::sum(SP(i, w1), {w1}); }, "row_sum");
  auto centered = [&](te::Expr i, te::Expr c) { return X(i, c) - RS(i) * inv_cols; };
  te::Tensor VP = te::compute(
      {rows, kWarp},
      [&](te::Var i, te::Var t) {
        return strided_part(
            te::ReduceOp::sum, cols, t,
            [&](te::Expr c) {
              te::Expr d = centered(i, c);
              return d * d;
            },
            "k");
      },
      "var_partial");
  te::IterVar w2 = te::reduce_axis({0, kWarp}, "lane");
  te::Tensor V = te::compute(
      {rows}, [&](te::Var i) { return te::sum(VP(i, w2), {w2}); }, "sq_sum");
  te::Tensor Y = te::compute(
      {rows, cols},
      [&](te::Var i, te::Var j) {
        return centered(i, j) * te::rsqrt(V(i) * inv_cols + epsilon) * gamma(j) + beta(j);
      },
      "Y");

  GpuKernelDef def{te::create_schedule({Y}), {X, gamma, beta, RS, Y}};
  te::Schedule& s = def.schedule;
  // Pass 1 (one block per row): the row sum, written to the workspace.
  s[RS].bind(RS.axis(0), "blockIdx.x");
  bind_partials(s, SP, RS, RS.axis(0));
  // Pass 2 (the same block): the sum of squared deviations, then the normalised row.
  s[Y].bind(Y.axis(0), "blockIdx.x");
  auto [jo, jt] = s[Y].split(Y.axis(1), kWarp);
  s[Y].bind(jt, "threadIdx.x");
  s[V].compute_at(s[Y], Y.axis(0));
  bind_partials(s, VP, V, V.axis(0));
  if (!s.status().ok()) return s.status();
  return def;
}

absl::StatusOr<te::PrimFunc> lower_gpu(const GpuKernelDef& def, const std::string& name) {
  return te::lower(def.schedule, def.args, name);
}

}  // namespace collage::codegen::cuda
