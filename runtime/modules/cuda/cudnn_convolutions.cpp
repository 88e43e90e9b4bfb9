// CudnnConvolutions: cuDNN's legacy convolution API loaded with dlopen, one handle on the
// runner's stream, each convolution planned once (descriptors, a measured algorithm, its
// epilogue path) and enqueued on every run.
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <climits>
#include <cstdio>

#include "cuda_driver.h"
#include "library_steps.h"
#include "library_table.h"

namespace collage::rt_cuda {

namespace {

// Entry points, typed from cudnn_graph.h, cudnn_ops.h and cudnn_cnn.h.
struct Cudnn {
  decltype(&::cudnnCreate) create = nullptr;
  decltype(&::cudnnDestroy) destroy = nullptr;
  decltype(&::cudnnSetStream) set_stream = nullptr;
  decltype(&::cudnnGetErrorString) error_string = nullptr;
  decltype(&::cudnnGetVersion) get_version = nullptr;
  decltype(&::cudnnCreateTensorDescriptor) create_tensor = nullptr;
  decltype(&::cudnnSetTensor4dDescriptor) set_tensor = nullptr;
  decltype(&::cudnnDestroyTensorDescriptor) destroy_tensor = nullptr;
  decltype(&::cudnnCreateFilterDescriptor) create_filter = nullptr;
  decltype(&::cudnnSetFilter4dDescriptor) set_filter = nullptr;
  decltype(&::cudnnDestroyFilterDescriptor) destroy_filter = nullptr;
  decltype(&::cudnnCreateConvolutionDescriptor) create_conv = nullptr;
  decltype(&::cudnnSetConvolution2dDescriptor) set_conv = nullptr;
  decltype(&::cudnnSetConvolutionGroupCount) set_groups = nullptr;
  decltype(&::cudnnSetConvolutionMathType) set_math_type = nullptr;
  decltype(&::cudnnDestroyConvolutionDescriptor) destroy_conv = nullptr;
  decltype(&::cudnnCreateActivationDescriptor) create_activation = nullptr;
  decltype(&::cudnnSetActivationDescriptor) set_activation = nullptr;
  decltype(&::cudnnDestroyActivationDescriptor) destroy_activation = nullptr;
  decltype(&::cudnnGetConvolutionForwardAlgorithm_v7) heuristics = nullptr;
  decltype(&::cudnnFindConvolutionForwardAlgorithmEx) find = nullptr;
  decltype(&::cudnnGetConvolutionForwardWorkspaceSize) workspace_size = nullptr;
  decltype(&::cudnnConvolutionForward) conv_forward = nullptr;
  decltype(&::cudnnConvolutionBiasActivationForward) conv_bias_act = nullptr;
  decltype(&::cudnnAddTensor) add_tensor = nullptr;
  decltype(&::cudnnActivationForward) activation_forward = nullptr;

  std::string error(cudnnStatus_t s) const {
    const char* text = error_string ? error_string(s) : nullptr;
    return text ? text : "cudnnStatus " + std::to_string(static_cast<int>(s));
  }
};

// The process's cuDNN table, loaded on the first call; null with `*why` set when there is none.
const Cudnn* cudnn_library(std::string* why) {
  static const LoadedTable<Cudnn>* const loaded =
      load_table<Cudnn>("cuDNN", "cuDNN not found", "libcudnn.so." + std::to_string(CUDNN_MAJOR),
                        [](Cudnn& c, auto sym) {
                          sym(c.create, "cudnnCreate");
                          sym(c.destroy, "cudnnDestroy");
                          sym(c.set_stream, "cudnnSetStream");
                          sym(c.error_string, "cudnnGetErrorString");
                          sym(c.get_version, "cudnnGetVersion");
                          sym(c.create_tensor, "cudnnCreateTensorDescriptor");
                          sym(c.set_tensor, "cudnnSetTensor4dDescriptor");
                          sym(c.destroy_tensor, "cudnnDestroyTensorDescriptor");
                          sym(c.create_filter, "cudnnCreateFilterDescriptor");
                          sym(c.set_filter, "cudnnSetFilter4dDescriptor");
                          sym(c.destroy_filter, "cudnnDestroyFilterDescriptor");
                          sym(c.create_conv, "cudnnCreateConvolutionDescriptor");
                          sym(c.set_conv, "cudnnSetConvolution2dDescriptor");
                          sym(c.set_groups, "cudnnSetConvolutionGroupCount");
                          sym(c.set_math_type, "cudnnSetConvolutionMathType");
                          sym(c.destroy_conv, "cudnnDestroyConvolutionDescriptor");
                          sym(c.create_activation, "cudnnCreateActivationDescriptor");
                          sym(c.set_activation, "cudnnSetActivationDescriptor");
                          sym(c.destroy_activation, "cudnnDestroyActivationDescriptor");
                          sym(c.heuristics, "cudnnGetConvolutionForwardAlgorithm_v7");
                          sym(c.find, "cudnnFindConvolutionForwardAlgorithmEx");
                          sym(c.workspace_size, "cudnnGetConvolutionForwardWorkspaceSize");
                          sym(c.conv_forward, "cudnnConvolutionForward");
                          sym(c.conv_bias_act, "cudnnConvolutionBiasActivationForward");
                          sym(c.add_tensor, "cudnnAddTensor");
                          sym(c.activation_forward, "cudnnActivationForward");
                        });
  return usable_table(loaded, why);
}

// The most workspace an algorithm may use; the heuristics' candidates above it are not tried.
constexpr size_t kWorkspaceCap = size_t{256} << 20;

constexpr std::array<const char*, CUDNN_CONVOLUTION_FWD_ALGO_COUNT> kAlgoNames = {
    "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
    "WINOGRAD",      "WINOGRAD_NONFUSED"};

// Whether a measured or suggested algorithm runs on tensor cores, which for fp32 means TF32.
bool tensor_op(cudnnMathType_t m) {
  return m == CUDNN_TENSOR_OP_MATH || m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

std::string conv_name(const ConvStep& s) {
  auto dims = [](std::initializer_list<int64_t> d) {
    std::string out = "[";
    for (int64_t v : d) {
      if (out.size() > 1) out += ',';
      out += std::to_string(v);
    }
    return out + "]";
  };
  auto pair = [](int64_t a, int64_t b) { return std::to_string(a) + "x" + std::to_string(b); };
  return "cuDNN conv x" + dims({s.n, s.c, s.h, s.w}) + " w" +
         dims({s.o, s.c / s.groups, s.kh, s.kw}) + " stride " + pair(s.stride_h, s.stride_w) +
         " pad " + pair(s.pad_h, s.pad_w) + " dilation " + pair(s.dilation_h, s.dilation_w) +
         " groups " + std::to_string(s.groups);
}

// One planned convolution; destroys its descriptors.
struct Plan {
  const Cudnn* dnn = nullptr;
  ConvStep step;
  std::string name;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t relu = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace_bytes = 0;
  float ms = 0;
  bool fused = false;  // bias and relu in cudnnConvolutionBiasActivationForward

  explicit Plan(const Cudnn* d) : dnn(d) {}
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (x) dnn->destroy_tensor(x);
    if (y) dnn->destroy_tensor(y);
    if (bias) dnn->destroy_tensor(bias);
    if (w) dnn->destroy_filter(w);
    if (conv) dnn->destroy_conv(conv);
    if (relu) dnn->destroy_activation(relu);
  }
};

// A device buffer freed when it goes out of scope (the measurement's temporary workspace).
struct DeviceBuffer {
  const Driver* driver;
  CUdeviceptr ptr = 0;
  ~DeviceBuffer() {
    if (ptr) driver->mem_free(ptr);
  }
};

}  // namespace

struct CudnnConvolutions::Impl {
  const Driver* driver = nullptr;
  const Cudnn* dnn = nullptr;
  CUstream stream = nullptr;
  cudnnHandle_t handle = nullptr;
  std::vector<std::unique_ptr<Plan>> plans;
  // One workspace for all plans, as large as the largest needs: the steps run one after another
  // on one stream, so they never use it at the same time.
  CUdeviceptr workspace = 0;
  size_t workspace_bytes = 0;

  ~Impl() {
    plans.clear();
    if (handle) dnn->destroy(handle);
    if (workspace) driver->mem_free(workspace);
  }

  std::string plan(Plan& p, CUdeviceptr arena);
  std::string choose_algorithm(Plan& p, CUdeviceptr arena);
  std::string grow_workspace(const Plan& p);
  std::string run(const Plan& p, CUdeviceptr arena, bool* fused_unsupported) const;
};

CudnnConvolutions::CudnnConvolutions(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudnnConvolutions::~CudnnConvolutions() = default;

std::string CudnnConvolutions::create(CUstream stream, std::unique_ptr<CudnnConvolutions>* out) {
  auto impl = std::make_unique<Impl>();
  std::string why;
  impl->driver = cuda_driver(&why);
  if (!impl->driver) return why;
  impl->dnn = cudnn_library(&why);
  if (!impl->dnn) return why;
  impl->stream = stream;
  if (cudnnStatus_t s = impl->dnn->create(&impl->handle); s != CUDNN_STATUS_SUCCESS) {
    impl->handle = nullptr;
    return "cudnnCreate: " + impl->dnn->error(s);
  }
  if (cudnnStatus_t s = impl->dnn->set_stream(impl->handle, stream); s != CUDNN_STATUS_SUCCESS)
    return "cudnnSetStream: " + impl->dnn->error(s);
  out->reset(new CudnnConvolutions(std::move(impl)));
  return {};
}

std::string CudnnConvolutions::add(const ConvStep& step, CUdeviceptr arena, size_t* index) {
  auto p = std::make_unique<Plan>(impl_->dnn);
  p->step = step;
  p->name = conv_name(step);
  if (std::string e = impl_->plan(*p, arena); !e.empty()) return p->name + ": " + e;
  *index = impl_->plans.size();
  impl_->plans.push_back(std::move(p));
  return {};
}

std::string CudnnConvolutions::Impl::plan(Plan& p, CUdeviceptr arena) {
  const ConvStep& s = p.step;
  for (int64_t v : {s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, s.out_h(), s.out_w()}) {
    if (v > INT_MAX) return "a dimension exceeds cuDNN's int range";
  }
  auto i = [](int64_t v) { return static_cast<int>(v); };
  std::string e;
  auto ok = [&](cudnnStatus_t st, const char* what) {
    if (st != CUDNN_STATUS_SUCCESS && e.empty()) e = std::string(what) + ": " + dnn->error(st);
    return e.empty();
  };
  const auto f32 = CUDNN_DATA_FLOAT;
  // FMA math keeps fp32 convolutions off the tensor cores: cuDNN's default math lets them run
  // in TF32 on Ampere and later.
  const bool described =
      ok(dnn->create_tensor(&p.x), "cudnnCreateTensorDescriptor") &&
      ok(dnn->set_tensor(p.x, CUDNN_TENSOR_NCHW, f32, i(s.n), i(s.c), i(s.h), i(s.w)),
         "cudnnSetTensor4dDescriptor (x)") &&
      ok(dnn->create_tensor(&p.y), "cudnnCreateTensorDescriptor") &&
      ok(dnn->set_tensor(p.y, CUDNN_TENSOR_NCHW, f32, i(s.n), i(s.o), i(s.out_h()), i(s.out_w())),
         "cudnnSetTensor4dDescriptor (y)") &&
      ok(dnn->create_filter(&p.w), "cudnnCreateFilterDescriptor") &&
      ok(dnn->set_filter(p.w, f32, CUDNN_TENSOR_NCHW, i(s.o), i(s.c / s.groups), i(s.kh), i(s.kw)),
         "cudnnSetFilter4dDescriptor") &&
      ok(dnn->create_conv(&p.conv), "cudnnCreateConvolutionDescriptor") &&
      ok(dnn->set_conv(p.conv, i(s.pad_h), i(s.pad_w), i(s.stride_h), i(s.stride_w),
                       i(s.dilation_h), i(s.dilation_w), CUDNN_CROSS_CORRELATION, f32),
         "cudnnSetConvolution2dDescriptor") &&
      ok(dnn->set_groups(p.conv, i(s.groups)), "cudnnSetConvolutionGroupCount") &&
      ok(dnn->set_math_type(p.conv, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType") &&
      (!s.has_bias || (ok(dnn->create_tensor(&p.bias), "cudnnCreateTensorDescriptor") &&
                       ok(dnn->set_tensor(p.bias, CUDNN_TENSOR_NCHW, f32, 1, i(s.o), 1, 1),
                          "cudnnSetTensor4dDescriptor (bias)"))) &&
      (s.activation != ConvActivation::relu ||
       (ok(dnn->create_activation(&p.relu), "cudnnCreateActivationDescriptor") &&
        ok(dnn->set_activation(p.relu, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0),
           "cudnnSetActivationDescriptor")));
  if (!described) return e;
  if (e = choose_algorithm(p, arena); !e.empty()) return e;
  if (e = grow_workspace(p); !e.empty()) return e;
  // The fused call supports bias with relu for some algorithms and not others: try it once here
  // and fall back to the separate calls when cuDNN declines. (Without an activation it would
  // need IDENTITY, which only IMPLICIT_PRECOMP_GEMM takes, so bias alone is never fused.)
  if (s.has_bias && s.activation == ConvActivation::relu) {
    p.fused = true;
    bool unsupported = false;
    e = run(p, arena, &unsupported);
    p.fused = !unsupported;
  }
  return e;
}

// cuDNN's heuristics name the candidates (fp32 FMA algorithms within kWorkspaceCap), which
// cudnnFindConvolutionForwardAlgorithmEx times on the arena's own buffers; the fastest candidate
// that ran wins.
std::string CudnnConvolutions::Impl::choose_algorithm(Plan& p, CUdeviceptr arena) {
  std::array<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT> perf{};
  int count = 0;
  if (cudnnStatus_t st =
          dnn->heuristics(handle, p.x, p.w, p.conv, p.y, int(perf.size()), &count, perf.data());
      st != CUDNN_STATUS_SUCCESS)
    return "cudnnGetConvolutionForwardAlgorithm_v7: " + dnn->error(st);
  std::array<bool, CUDNN_CONVOLUTION_FWD_ALGO_COUNT> candidate{};
  size_t find_bytes = 0;
  for (int j = 0; j < count; ++j) {
    const cudnnConvolutionFwdAlgoPerf_t& r = perf[j];
    if (r.status != CUDNN_STATUS_SUCCESS || tensor_op(r.mathType) || r.memory > kWorkspaceCap)
      continue;
    candidate[r.algo] = true;
    find_bytes = std::max(find_bytes, r.memory);
  }
  if (std::none_of(candidate.begin(), candidate.end(), [](bool c) { return c; }))
    return "cuDNN suggests no fp32 (FMA) algorithm within a " + std::to_string(kWorkspaceCap) +
           " B workspace";
  DeviceBuffer find_workspace{driver};
  if (find_bytes > 0) {
    if (CUresult r = driver->mem_alloc(&find_workspace.ptr, find_bytes); r != CUDA_SUCCESS) {
      find_workspace.ptr = 0;
      return "workspace of " + std::to_string(find_bytes) + " B for timing: " + driver->error(r);
    }
  }
  const auto at = [arena](uint64_t offset) { return reinterpret_cast<void*>(arena + offset); };
  cudnnStatus_t st = dnn->find(handle, p.x, at(p.step.x), p.w, at(p.step.weight), p.conv, p.y,
                               at(p.step.y), int(perf.size()), &count, perf.data(),
                               reinterpret_cast<void*>(find_workspace.ptr), find_bytes);
  // The temporary workspace is freed on return: nothing may still be using it.
  if (CUresult r = driver->stream_synchronize(stream); r != CUDA_SUCCESS)
    return "timing the algorithms: " + driver->error(r);
  if (st != CUDNN_STATUS_SUCCESS)
    return "cudnnFindConvolutionForwardAlgorithmEx: " + dnn->error(st);
  // Find's results come fastest first.
  for (int j = 0; j < count; ++j) {
    const cudnnConvolutionFwdAlgoPerf_t& r = perf[j];
    if (r.status != CUDNN_STATUS_SUCCESS || !candidate[r.algo] || tensor_op(r.mathType) ||
        r.memory > find_bytes)
      continue;
    p.algo = r.algo;
    p.ms = r.time;
    st = dnn->workspace_size(handle, p.x, p.w, p.conv, p.y, p.algo, &p.workspace_bytes);
    if (st != CUDNN_STATUS_SUCCESS)
      return "cudnnGetConvolutionForwardWorkspaceSize: " + dnn->error(st);
    return {};
  }
  return "none of cuDNN's suggested fp32 (FMA) algorithms ran";
}

std::string CudnnConvolutions::Impl::grow_workspace(const Plan& p) {
  if (p.workspace_bytes <= workspace_bytes) return {};
  // Earlier plans' timing and trial runs may still be using the old workspace.
  if (CUresult r = driver->stream_synchronize(stream); r != CUDA_SUCCESS)
    return "growing the workspace: " + driver->error(r);
  if (workspace) driver->mem_free(workspace);
  workspace = 0;
  workspace_bytes = 0;
  if (CUresult r = driver->mem_alloc(&workspace, p.workspace_bytes); r != CUDA_SUCCESS) {
    workspace = 0;
    return "workspace of " + std::to_string(p.workspace_bytes) + " B: " + driver->error(r);
  }
  workspace_bytes = p.workspace_bytes;
  return {};
}

// Enqueues plan `p`; `*fused_unsupported` (when given) is set, with no error returned, when
// cuDNN declines the fused call.
std::string CudnnConvolutions::Impl::run(const Plan& p, CUdeviceptr arena,
                                         bool* fused_unsupported) const {
  const auto at = [arena](uint64_t offset) { return reinterpret_cast<void*>(arena + offset); };
  void* x = at(p.step.x);
  void* w = at(p.step.weight);
  void* y = at(p.step.y);
  void* ws = reinterpret_cast<void*>(workspace);
  const float one = 1.0f, zero = 0.0f;
  std::string e;
  auto ok = [&](cudnnStatus_t st, const char* what) {
    if (st != CUDNN_STATUS_SUCCESS && e.empty()) e = std::string(what) + ": " + dnn->error(st);
    return e.empty();
  };
  if (p.fused) {
    // z is y with weight zero: cuDNN requires a z operand even when it adds none of it.
    cudnnStatus_t st =
        dnn->conv_bias_act(handle, &one, p.x, x, p.w, w, p.conv, p.algo, ws, workspace_bytes, &zero,
                           p.y, y, p.bias, at(p.step.bias), p.relu, p.y, y);
    if (fused_unsupported && CUDNN_STATUS_CATEGORY(st) == CUDNN_STATUS_NOT_SUPPORTED) {
      *fused_unsupported = true;
      return {};
    }
    ok(st, "cudnnConvolutionBiasActivationForward");
    return e;
  }
  // Bias and relu in place on y, after the convolution.
  ok(dnn->conv_forward(handle, &one, p.x, x, p.w, w, p.conv, p.algo, ws, workspace_bytes, &zero,
                       p.y, y),
     "cudnnConvolutionForward") &&
      (!p.bias || ok(dnn->add_tensor(handle, &one, p.bias, at(p.step.bias), &one, p.y, y),
                     "cudnnAddTensor")) &&
      (!p.relu || ok(dnn->activation_forward(handle, p.relu, &one, p.y, y, &zero, p.y, y),
                     "cudnnActivationForward"));
  return e;
}

std::string CudnnConvolutions::enqueue(size_t index, CUdeviceptr arena) const {
  assert(index < impl_->plans.size());
  const Plan& p = *impl_->plans[index];
  if (std::string e = impl_->run(p, arena, nullptr); !e.empty()) return p.name + ": " + e;
  return {};
}

std::string CudnnConvolutions::describe(size_t index) const {
  assert(index < impl_->plans.size());
  const Plan& p = *impl_->plans[index];
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.3f", p.ms);
  std::string out = "conv " + std::to_string(index) + ": " + kAlgoNames[p.algo] + ", workspace " +
                    std::to_string(p.workspace_bytes) + " B, " + ms + " ms measured";
  if (p.step.has_bias && p.step.activation == ConvActivation::relu)
    out += p.fused ? ", bias and relu fused" : ", bias and relu separate";
  return out;
}

std::string CudnnConvolutions::version() const {
  // cuDNN 9 encodes its version as major * 10000 + minor * 100 + patch.
  const size_t v = impl_->dnn->get_version();
  return "cudnn " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace collage::rt_cuda
