// A GPU program: what the cuda runtime module runs for one GPU region of a model, and its
// versioned binary form (the kernel's parameters), shared by the compiler (which writes it) and
// the module (which reads it). Depends only on the C++ library.
//
// A region keeps its tensors in one device arena: its inputs are copied in at the start of a run,
// its steps read and write arena offsets, and its outputs are copied out at the end; constants
// are uploaded once, when the kernel is created. Steps run in order on one stream: a launch of a
// generated kernel (a cubin the program carries), a cuBLAS GEMM, a cuDNN convolution.
//
// Layout: u32 magic "CUPG", u32 version, then the fields below in declaration order. Integers are
// little-endian (u8, u32, u64, i64), floats IEEE-754 binary32 in a u32, strings and lists a u32
// count and their elements. Decoding checks every length against the bytes left and every enum
// against its range; check_program() checks the offsets against the arena and the arguments.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace collage::rt_cuda {

inline constexpr uint32_t kProgramMagic = 0x47505543;  // "CUPG" read as a little-endian u32
inline constexpr uint32_t kProgramVersion = 1;
inline constexpr const char* kEntryProgram = "gpu_program";

// Arena offsets are aligned to this many bytes (float4 accesses, cuBLAS and cuDNN alignment).
inline constexpr uint64_t kArenaAlignment = 256;

// A launch of kernel `function` of the program's cubin `image`; each parameter is a pointer to
// the arena at the given offset (the generated kernels' ABI: typed pointers, in order).
struct LaunchStep {
  uint32_t image = 0;
  std::string function;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t shared_bytes = 0;  // dynamic shared memory
  std::vector<uint64_t> args;
};

// C = alpha * op(A) x op(B) + beta * C over `batch` matrices, all row-major f32 (the compiler's
// view; the module maps it onto column-major cuBLAS). op(A) is [m, k], op(B) [k, n], C [m, n];
// lda, ldb, ldc are row strides (elements), stride_* the distance between matrices of a batch.
// TF32 is off: results are full fp32.
struct GemmStep {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  float alpha = 1.0f, beta = 0.0f;
  uint64_t a = 0, b = 0, c = 0;
};

enum class ConvActivation : uint8_t { none = 0, relu = 1 };

// y = act(conv2d(x, w) + bias) in NCHW f32: x [n, c, h, w], w [o, c / groups, kh, kw], bias [o]
// (absent when has_bias is false), y [n, o, oh, ow]; symmetric padding.
struct ConvStep {
  int64_t n = 1, c = 0, h = 0, w = 0, o = 0, kh = 1, kw = 1;
  int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
  bool has_bias = false;
  ConvActivation activation = ConvActivation::none;
  uint64_t x = 0, weight = 0, bias = 0, y = 0;

  int64_t out_h() const { return (h + 2 * pad_h - dilation_h * (kh - 1) - 1) / stride_h + 1; }
  int64_t out_w() const { return (w + 2 * pad_w - dilation_w * (kw - 1) - 1) / stride_w + 1; }
};

using Step = std::variant<LaunchStep, GemmStep, ConvStep>;

struct GpuProgram {
  uint64_t arena_bytes = 0;
  // Where each kernel argument (inputs, then outputs) and each constant lives in the arena.
  std::vector<uint64_t> arg_offsets;
  std::vector<uint64_t> constant_offsets;
  std::vector<std::vector<uint8_t>> images;  // cubins, for the launch steps
  std::vector<Step> steps;
  // Record the steps into a CUDA graph on the first run and replay it (one launch per run
  // instead of one per step); falls back to plain launches when capture fails.
  bool use_graph = true;
};

// Places `bytes` at the end of the program's arena (aligned) and returns the offset: how a
// writer lays out a program's tensors when it does not reuse memory.
inline uint64_t reserve(GpuProgram& program, uint64_t bytes) {
  const uint64_t at = program.arena_bytes;
  program.arena_bytes += (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  return at;
}

std::vector<uint8_t> encode_program(const GpuProgram& program);

// Decodes `size` bytes; empty on success, else what is wrong and at which byte.
std::string decode_program(const uint8_t* data, size_t size, GpuProgram* out);

// What is wrong with `program` for arguments of `arg_bytes` and constants of `constant_bytes`
// (sizes in bytes), or empty: offsets misaligned or outside the arena, counts that differ from
// the arguments, a launch naming an image the program lacks, GEMM or convolution operands that
// do not fit the arena, non-positive dimensions, channels not divisible by groups.
std::string check_program(const GpuProgram& program, const std::vector<uint64_t>& arg_bytes,
                          const std::vector<uint64_t>& constant_bytes);

}  // namespace collage::rt_cuda
