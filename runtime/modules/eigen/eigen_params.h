// The parameters of Eigen kernels and their versioned binary form, shared by the compiler (which
// writes them) and the Eigen runtime module (which reads them). Depends only on the C++ library.
//
// Layout: u32 magic "EIGN", u32 version, then the fields of one kernel kind in declaration order.
// Integers are little-endian (u8, u32, i64), floats are IEEE-754 binary32 in a little-endian u32;
// a list is a u32 count followed by its elements. Decoding checks every length against the bytes
// left and every enum against its range; semantic checks (shapes, indices) happen when a kernel
// is created from the parameters and the argument descriptors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace collage::rt_eigen {

inline constexpr uint32_t kParamsMagic = 0x4E474945;  // "EIGN" read as a little-endian u32
inline constexpr uint32_t kParamsVersion = 1;

// Kernel kinds (KernelRecord::entry).
inline constexpr const char* kEntryMatMul = "matmul";
inline constexpr const char* kEntryConv = "conv";
inline constexpr const char* kEntryElementwise = "elementwise";
inline constexpr const char* kEntryReduce = "reduce";
inline constexpr const char* kEntrySoftmax = "softmax";

enum class OperandSource : uint8_t { arg = 0, constant = 1 };

// A tensor a kernel reads: one of the kernel's input arguments or one of its constants.
struct OperandRef {
  OperandSource source = OperandSource::arg;
  uint32_t index = 0;
};

// Element operations of an elementwise program. Binary operations combine the running value
// with an operand.
enum class EwOp : uint8_t {
  load,        // value = operand
  add,         // value + operand
  add_scaled,  // value + p0 * operand (Gemm's beta * C)
  sub,
  mul,
  div,
  pow,
  prelu,  // value < 0 ? value * operand : value
  relu,
  sigmoid,
  tanh,
  gelu_erf,
  gelu_tanh,
  exp,
  log,
  sqrt,
  reciprocal,
  neg,
  abs,
  erf,
  leaky_relu,    // p0 = alpha
  hard_sigmoid,  // p0 = alpha, p1 = beta
  hard_swish,
  clip,  // p0 = min, p1 = max
  count_,
};
bool ew_op_takes_operand(EwOp op);

// One step of an elementwise program.
struct EwStep {
  EwOp op = EwOp::relu;
  // For binary operations: true when the operand is the LEFT argument (operand - value).
  bool operand_first = false;
  int32_t operand = -1;  // index into EwProgram::operands, -1 for unary steps
  float p0 = 0.f, p1 = 0.f;
};

// An operand of a program read with `strides` (elements, one per output dimension; 0 on
// broadcast dimensions).
struct EwOperand {
  OperandRef ref;
  std::vector<int64_t> strides;
};

// An elementwise program over a dense row-major output of `shape`: the steps run in order on
// each element, in place on the output. Kernels with a main computation (matmul, conv) run it as
// an epilogue on their result; the elementwise kernel starts it with a `load` step.
struct EwProgram {
  std::vector<int64_t> shape;
  std::vector<EwOperand> operands;
  std::vector<EwStep> steps;
};

// Y[b] = alpha * op(A[b]) * op(B[b]) for every batch index b of `batch_dims`, then `epilogue`.
// A[b] starts at element sum(b_i * a_batch_strides[i]) of A and is M x K row-major, or K x M when
// trans_a; likewise B[b] is K x N, or N x K when trans_b. Y is dense: batch..., M, N.
struct MatMulParams {
  OperandRef a, b;
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  float alpha = 1.f;
  std::vector<int64_t> batch_dims, a_batch_strides, b_batch_strides;
  EwProgram epilogue;  // over Y's shape
};

// 2-D convolution, NCHW input, weights M x C/group x KH x KW, output N x M x OH x OW, then
// `epilogue` (bias, activations). Padding beyond pad_top/pad_left is implied by OH/OW.
struct ConvParams {
  OperandRef x, w;
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  int64_t out_channels = 0, kernel_h = 0, kernel_w = 0, out_h = 0, out_w = 0;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1, pad_top = 0, pad_left = 0;
  int64_t group = 1;
  EwProgram epilogue;  // over N x M x OH x OW
};

struct ElementwiseParams {
  EwProgram program;  // its first step is `load`
};

enum class ReduceOp : uint8_t { sum = 0, mean = 1, max = 2, count_ };

// X viewed as outer x extent x inner, reduced over the middle axis into outer x inner.
struct ReduceParams {
  OperandRef x;
  ReduceOp op = ReduceOp::sum;
  int64_t outer = 0, extent = 0, inner = 0;
};

// Softmax (or LogSoftmax) of X viewed as outer x extent x inner over the middle axis.
struct SoftmaxParams {
  OperandRef x;
  bool log = false;
  int64_t outer = 0, extent = 0, inner = 0;
};

std::vector<uint8_t> encode_params(const MatMulParams& p);
std::vector<uint8_t> encode_params(const ConvParams& p);
std::vector<uint8_t> encode_params(const ElementwiseParams& p);
std::vector<uint8_t> encode_params(const ReduceParams& p);
std::vector<uint8_t> encode_params(const SoftmaxParams& p);

// Each returns an empty string on success, else what is wrong with the bytes.
std::string decode_params(const uint8_t* data, size_t size, MatMulParams& p);
std::string decode_params(const uint8_t* data, size_t size, ConvParams& p);
std::string decode_params(const uint8_t* data, size_t size, ElementwiseParams& p);
std::string decode_params(const uint8_t* data, size_t size, ReduceParams& p);
std::string decode_params(const uint8_t* data, size_t size, SoftmaxParams& p);

}  // namespace collage::rt_eigen
