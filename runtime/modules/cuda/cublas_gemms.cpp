// CublasGemms: cuBLAS loaded with dlopen, one handle on the runner's stream, row-major GEMMs
// mapped onto cuBLAS's column-major ones.
#include <cublas_v2.h>

#include <climits>

#include "cuda_driver.h"
#include "library_steps.h"
#include "library_table.h"

namespace collage::rt_cuda {

namespace {

// Entry points, typed from cublas_api.h.
struct Cublas {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  decltype(&::cublasSetWorkspace_v2) set_workspace = nullptr;
  decltype(&::cublasSetMathMode) set_math_mode = nullptr;
  decltype(&::cublasSgemm_v2) sgemm = nullptr;
  decltype(&::cublasSgemmStridedBatched) sgemm_strided_batched = nullptr;
  decltype(&::cublasGetVersion_v2) get_version = nullptr;
  decltype(&::cublasGetStatusString) status_string = nullptr;

  std::string error(cublasStatus_t s) const {
    const char* text = status_string ? status_string(s) : nullptr;
    return text ? text : "cublasStatus " + std::to_string(static_cast<int>(s));
  }
};

// The process's cuBLAS table, loaded on the first call; null with `*why` set when there is none.
const Cublas* cublas_library(std::string* why) {
  static const LoadedTable<Cublas>* const loaded = load_table<Cublas>(
      "cuBLAS", "cuBLAS not found", "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR),
      [](Cublas& c, auto sym) {
        sym(c.create, "cublasCreate_v2");
        sym(c.destroy, "cublasDestroy_v2");
        sym(c.set_stream, "cublasSetStream_v2");
        sym(c.set_workspace, "cublasSetWorkspace_v2");
        sym(c.set_math_mode, "cublasSetMathMode");
        sym(c.sgemm, "cublasSgemm_v2");
        sym(c.sgemm_strided_batched, "cublasSgemmStridedBatched");
        sym(c.get_version, "cublasGetVersion_v2");
        sym(c.status_string, "cublasGetStatusString");
      });
  return usable_table(loaded, why);
}

// cuBLAS's own workspace must be set for its calls to be captured into a CUDA graph (it would
// otherwise allocate during capture); 32 MiB is what NVIDIA recommends for Hopper.
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

std::string gemm_name(const GemmStep& s) {
  return "cuBLAS GEMM " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
         std::to_string(s.k) + " (batch " + std::to_string(s.batch) + ")";
}

}  // namespace

struct CublasGemms::Impl {
  const Driver* driver = nullptr;
  const Cublas* cublas = nullptr;
  cublasHandle_t handle = nullptr;
  CUdeviceptr workspace = 0;

  ~Impl() {
    if (handle) cublas->destroy(handle);
    if (workspace) driver->mem_free(workspace);
  }
};

CublasGemms::CublasGemms(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CublasGemms::~CublasGemms() = default;

std::string CublasGemms::create(CUstream stream, std::unique_ptr<CublasGemms>* out) {
  auto impl = std::make_unique<Impl>();
  std::string why;
  impl->driver = cuda_driver(&why);
  if (!impl->driver) return why;
  impl->cublas = cublas_library(&why);
  if (!impl->cublas) return why;
  const Cublas& c = *impl->cublas;
  if (cublasStatus_t s = c.create(&impl->handle); s != CUBLAS_STATUS_SUCCESS) {
    impl->handle = nullptr;
    return "cublasCreate: " + c.error(s);
  }
  if (CUresult r = impl->driver->mem_alloc(&impl->workspace, kWorkspaceBytes); r != CUDA_SUCCESS) {
    impl->workspace = 0;
    return "cuBLAS workspace (" + std::to_string(kWorkspaceBytes) +
           " B): " + impl->driver->error(r);
  }
  // Pedantic math is the one mode that guarantees fp32 all the way: no TF32 and no BF16x9
  // emulation, not even when the environment asks for them (NVIDIA_TF32_OVERRIDE,
  // CUBLAS_EMULATE_SINGLE_PRECISION), and no reduced-precision reductions.
  cublasStatus_t s = c.set_stream(impl->handle, stream);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = c.set_workspace(impl->handle, reinterpret_cast<void*>(impl->workspace), kWorkspaceBytes);
  if (s == CUBLAS_STATUS_SUCCESS) s = c.set_math_mode(impl->handle, CUBLAS_PEDANTIC_MATH);
  if (s != CUBLAS_STATUS_SUCCESS) return "cuBLAS handle setup: " + c.error(s);
  out->reset(new CublasGemms(std::move(impl)));
  return {};
}

std::string CublasGemms::enqueue(const GemmStep& step, CUdeviceptr arena) const {
  for (int64_t v : {step.m, step.n, step.k, step.batch, step.lda, step.ldb, step.ldc}) {
    if (v > INT_MAX) return gemm_name(step) + ": a dimension exceeds cuBLAS's int range";
  }
  const Cublas& c = *impl_->cublas;
  const auto* a = reinterpret_cast<const float*>(arena + step.a);
  const auto* b = reinterpret_cast<const float*>(arena + step.b);
  auto* out = reinterpret_cast<float*>(arena + step.c);
  // A row-major [r, c] matrix with row stride ld is, to column-major cuBLAS, its transpose with
  // leading dimension ld. So C^T = op(B)^T op(A)^T is computed, B first, and each stored
  // operand's transpose flag carries over unchanged.
  const cublasOperation_t op_a = step.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = step.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = static_cast<int>(step.n), n = static_cast<int>(step.m);
  const int k = static_cast<int>(step.k);
  cublasStatus_t s;
  if (step.batch == 1) {
    s = c.sgemm(impl_->handle, op_b, op_a, m, n, k, &step.alpha, b, static_cast<int>(step.ldb), a,
                static_cast<int>(step.lda), &step.beta, out, static_cast<int>(step.ldc));
  } else {
    s = c.sgemm_strided_batched(
        impl_->handle, op_b, op_a, m, n, k, &step.alpha, b, static_cast<int>(step.ldb),
        step.stride_b, a, static_cast<int>(step.lda), step.stride_a, &step.beta, out,
        static_cast<int>(step.ldc), step.stride_c, static_cast<int>(step.batch));
  }
  if (s != CUBLAS_STATUS_SUCCESS) return gemm_name(step) + ": " + c.error(s);
  return {};
}

std::string CublasGemms::version() const {
  int v = 0;
  if (impl_->cublas->get_version(impl_->handle, &v) != CUBLAS_STATUS_SUCCESS) return "cublas ?";
  // CUBLAS_VERSION's encoding: major * 10000 + minor * 100 + patch.
  return "cublas " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace collage::rt_cuda
