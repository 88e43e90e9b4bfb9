// The dnnl module's kernel parameters: a small versioned little-endian binary format written by
// the compiler side (lib/backends/dnnl) and read, bounds-checked, by the runtime module. Each
// struct lists its fields once in `io`, which both the writer and the reader run, so the two sides
// cannot drift apart. Standard C++ only: this header is part of the runtime.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace collage::rt_dnnl {

inline constexpr uint32_t kParamsMagic = 0x504e4443;  // "CDNP"
// 2 added Operand::c_block; the module still reads version 1 (every operand plain).
inline constexpr uint32_t kParamsVersion = 2;
inline constexpr uint32_t kOldestParamsVersion = 1;
inline constexpr uint32_t kMaxRank = 12;  // DNNL_MAX_NDIMS
inline constexpr uint32_t kMaxPostOps = 32;
inline constexpr uint32_t kMaxEltwiseOps = 32;
inline constexpr uint32_t kMaxConcatInputs = 4096;
inline constexpr uint32_t kMaxConstants = 4096;
inline constexpr uint32_t kMaxScales = 1u << 20;  // one per output channel

// One kernel = one oneDNN operation plus the reorders and in-place steps around it. The entry
// name of the kernel record is op_kind_name(kind).
enum class OpKind : uint32_t {
  conv = 1,
  deconv = 2,
  matmul = 3,
  pool = 4,
  softmax = 5,
  layer_norm = 6,
  eltwise = 7,
  binary = 8,
  concat = 9,
  qconv = 10,        // 8-bit integer convolution (ConvInteger, QLinearConv)
  qmatmul = 11,      // 8-bit integer matmul (MatMulInteger, QLinearMatMul)
  rnn = 12,          // LSTM, GRU, vanilla RNN (dnnl_params_rnn.h)
  deform_conv = 13,  // deformable 2-D convolution (dnnl_params_deform.h)
};

inline const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::conv:
      return "conv";
    case OpKind::deconv:
      return "deconv";
    case OpKind::matmul:
      return "matmul";
    case OpKind::pool:
      return "pool";
    case OpKind::softmax:
      return "softmax";
    case OpKind::layer_norm:
      return "layer_norm";
    case OpKind::eltwise:
      return "eltwise";
    case OpKind::binary:
      return "binary";
    case OpKind::concat:
      return "concat";
    case OpKind::qconv:
      return "qconv";
    case OpKind::qmatmul:
      return "qmatmul";
    case OpKind::rnn:
      return "rnn";
    case OpKind::deform_conv:
      return "deform_conv";
  }
  return nullptr;
}

// Our own numbering (stable across oneDNN versions); the module maps them to dnnl algorithms.
enum class EltwiseAlg : uint32_t {
  relu = 1,  // alpha: negative slope
  tanh = 2,
  logistic = 3,
  gelu_erf = 4,
  gelu_tanh = 5,
  clip = 6,  // alpha: lower bound, beta: upper bound
  hardswish = 7,
  exp = 8,
  abs = 9,
  sqrt = 10,
  log = 11,
  linear = 12,  // alpha * x + beta
  pow = 13,     // alpha * x ^ beta
};
enum class BinaryAlg : uint32_t { add = 1, sub = 2, mul = 3, div = 4 };
enum class PoolAlg : uint32_t { max = 1, avg_include_pad = 2, avg_exclude_pad = 3 };
enum class SourceKind : uint32_t { none = 0, arg = 1, constant = 2 };
enum class PostOpKind : uint32_t { eltwise = 1, sum = 2, binary = 3 };

// A tensor operand: a kernel argument (dense row-major, `dims` may regroup the argument's shape
// as long as the element count matches; or channel-blocked, see c_block) or a constant (its dims
// are those of its layout).
struct Operand {
  SourceKind kind = SourceKind::none;
  int32_t index = -1;
  std::vector<int64_t> dims;
  // Arguments only: the last two axes are stored transposed (a column-major matrix).
  uint32_t transposed = 0;
  // Arguments only: 0, or the argument is stored channel-blocked by this many channels (oneDNN's
  // nCw8c, nChw16c, ...: axis 1 of `dims` split into blocks stored innermost; collage/layout.h).
  uint32_t c_block = 0;
  template <class IO>
  void io(IO& s) {
    s.e32(kind);
    s.i32(index);
    s.dims(dims);
    s.u32(transposed);
    if (s.version() >= 2) s.u32(c_block);
  }
};

// The memory layout of one constant, in oneDNN's blocked form: dims, padded dims, outer strides
// (in elements) and inner blocks. A plain row-major layout has padded_dims == dims, row-major
// strides and no inner blocks.
struct Layout {
  std::vector<int64_t> dims, padded_dims, strides, inner_blks, inner_idxs;
  template <class IO>
  void io(IO& s) {
    s.dims(dims);
    s.dims(padded_dims);
    s.dims(strides);
    s.dims(inner_blks);
    s.dims(inner_idxs);
  }
};

inline Layout plain_layout(const std::vector<int64_t>& dims) {
  Layout l;
  l.dims = l.padded_dims = dims;
  l.strides.assign(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) l.strides[i - 1] = l.strides[i] * dims[i];
  return l;
}

struct EltwiseOp {
  EltwiseAlg alg = EltwiseAlg::relu;
  float alpha = 0.f, beta = 0.f;
  template <class IO>
  void io(IO& s) {
    s.e32(alg);
    s.f32(alpha);
    s.f32(beta);
  }
};

// A post-op of conv, deconv, matmul or binary: eltwise (dst = f(dst)), sum (dst += operand, the
// operand has dst's shape) or binary (dst = dst op operand, operand broadcast to dst).
struct PostOp {
  PostOpKind kind = PostOpKind::eltwise;
  EltwiseOp eltwise;
  BinaryAlg binary = BinaryAlg::add;
  Operand operand;
  template <class IO>
  void io(IO& s) {
    s.e32(kind);
    eltwise.io(s);
    s.e32(binary);
    operand.io(s);
  }
};

// What every kernel starts with.
struct Header {
  uint32_t magic = kParamsMagic;
  uint32_t version = kParamsVersion;
  OpKind kind = OpKind::conv;
  int32_t num_threads = 0;               // OpenMP threads while the kernel runs; 0: leave as it is
  std::vector<Layout> constant_layouts;  // one per kernel constant
  template <class IO>
  void io(IO& s) {
    s.u32(magic);
    s.u32(version);
    s.e32(kind);
    s.i32(num_threads);
    s.list(constant_layouts, kMaxConstants);
  }
};

// Conv and deconv (ConvTranspose). Weights are a constant whose layout dims are the oneDNN
// weight dims: {OC, IC, k...} or, with groups > 1, {G, OC/G, IC/G, k...}. Dilations count from
// 1 (ONNX), pads are explicit.
struct ConvParams {
  Operand src, dst, weights, bias;
  int64_t groups = 1;
  std::vector<int64_t> strides, dilations, pad_begin, pad_end;
  std::vector<PostOp> post_ops;
  template <class IO>
  void io(IO& s) {
    src.io(s);
    dst.io(s);
    weights.io(s);
    bias.io(s);
    s.i64(groups);
    s.dims(strides);
    s.dims(dilations);
    s.dims(pad_begin);
    s.dims(pad_end);
    s.list(post_ops, kMaxPostOps);
  }
};

// dst = a x b (+ bias), numpy batch broadcasting over equal-rank dims.
struct MatMulParams {
  Operand a, b, bias, dst;
  std::vector<PostOp> post_ops;
  template <class IO>
  void io(IO& s) {
    a.io(s);
    b.io(s);
    bias.io(s);
    dst.io(s);
    s.list(post_ops, kMaxPostOps);
  }
};

struct PoolParams {
  Operand src, dst;
  PoolAlg alg = PoolAlg::max;
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end;
  template <class IO>
  void io(IO& s) {
    src.io(s);
    dst.io(s);
    s.e32(alg);
    s.dims(kernel);
    s.dims(strides);
    s.dims(dilations);
    s.dims(pad_begin);
    s.dims(pad_end);
  }
};

struct SoftmaxParams {
  Operand src, dst;
  int32_t axis = 0;
  uint32_t log = 0;
  template <class IO>
  void io(IO& s) {
    src.io(s);
    dst.io(s);
    s.i32(axis);
    s.u32(log);
  }
};

// Normalises the last axis of src; scale and shift are constants of that axis's length.
struct LayerNormParams {
  Operand src, dst, scale, shift;
  float epsilon = 1e-5f;
  template <class IO>
  void io(IO& s) {
    src.io(s);
    dst.io(s);
    scale.io(s);
    shift.io(s);
    s.f32(epsilon);
  }
};

// dst = f_n(...f_1(src)).
struct EltwiseParams {
  Operand src, dst;
  std::vector<EltwiseOp> ops;
  template <class IO>
  void io(IO& s) {
    src.io(s);
    dst.io(s);
    s.list(ops, kMaxEltwiseOps);
  }
};

// dst = src0 op src1 (src1 broadcast to src0's dims, which are dst's), then post-ops.
struct BinaryParams {
  Operand src0, src1, dst;
  BinaryAlg alg = BinaryAlg::add;
  std::vector<PostOp> post_ops;
  template <class IO>
  void io(IO& s) {
    src0.io(s);
    src1.io(s);
    dst.io(s);
    s.e32(alg);
    s.list(post_ops, kMaxPostOps);
  }
};

// Joins the sources along `axis`; all have element type `dtype` (a collage_dtype_t).
struct ConcatParams {
  std::vector<Operand> srcs;
  Operand dst;
  int32_t axis = 0;
  int32_t dtype = 0;
  template <class IO>
  void io(IO& s) {
    s.list(srcs, kMaxConcatInputs);
    dst.io(s);
    s.i32(axis);
    s.i32(dtype);
  }
};

// The integer arithmetic of qconv and qmatmul: acc = sum (src - src_zero_point) * (weights -
// weights_zero_point), in i32 (weights are s8; qconv's weights_zero_point must be 0, the
// compiler subtracts it from the weights where the result fits s8). A dst of i32 gets acc;
// otherwise v = f32(acc + bias) * scale (scales: one, or one per output channel, the dst's axis 1
// for qconv and its last axis for qmatmul), and dst = saturate(round_half_even(v) +
// dst_zero_point).
struct QuantParams {
  int32_t src_zero_point = 0;
  int32_t weights_zero_point = 0;
  int32_t dst_zero_point = 0;
  std::vector<float> scales;
  template <class IO>
  void io(IO& s) {
    s.i32(src_zero_point);
    s.i32(weights_zero_point);
    s.i32(dst_zero_point);
    s.floats(scales, kMaxScales);
  }
};

// ConvParams (no post-ops; bias i32) with the quantisation.
struct QConvParams {
  ConvParams conv;
  QuantParams quant;
  template <class IO>
  void io(IO& s) {
    conv.io(s);
    quant.io(s);
  }
};

// MatMulParams (no post-ops, no bias; b a constant) with the quantisation.
struct QMatMulParams {
  MatMulParams matmul;
  QuantParams quant;
  template <class IO>
  void io(IO& s) {
    matmul.io(s);
    quant.io(s);
  }
};

// Appends fields little-endian, in format `version` (the current one but in tests of the
// reader).
class ParamWriter {
 public:
  explicit ParamWriter(uint32_t version = kParamsVersion) : version_(version) {}
  void u32(const uint32_t& v) { put(v); }
  void i32(const int32_t& v) { put(v); }
  void i64(const int64_t& v) { put(v); }
  void f32(const float& v) { put(v); }
  template <class E>
  void e32(const E& v) {
    put(static_cast<uint32_t>(v));
  }
  void dims(const std::vector<int64_t>& v) {
    put(static_cast<uint32_t>(v.size()));
    for (int64_t x : v) put(x);
  }
  void floats(const std::vector<float>& v, uint32_t) {
    put(static_cast<uint32_t>(v.size()));
    for (float x : v) put(x);
  }
  template <class T>
  void list(std::vector<T>& v, uint32_t) {
    put(static_cast<uint32_t>(v.size()));
    for (T& x : v) x.io(*this);
  }
  std::vector<uint8_t>& bytes() { return out_; }
  uint32_t version() const { return version_; }

 private:
  template <class T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));  // the supported hosts are little-endian
    out_.insert(out_.end(), b, b + sizeof(T));
  }
  uint32_t version_;
  std::vector<uint8_t> out_;
};

// Reads fields, never past the end. The first failure sticks: later reads return zeros and
// error() names what could not be read and where.
class ParamReader {
 public:
  ParamReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  void u32(uint32_t& v) { get(v, "u32"); }
  void i32(int32_t& v) { get(v, "i32"); }
  void i64(int64_t& v) { get(v, "i64"); }
  void f32(float& v) { get(v, "f32"); }
  // Enumerations travel as u32; the module checks the value when it maps it.
  template <class E>
  void e32(E& v) {
    uint32_t raw = 0;
    get(raw, "u32");
    v = static_cast<E>(raw);
  }
  void dims(std::vector<int64_t>& v) {
    uint32_t n = 0;
    get(n, "list length");
    if (!ok()) return;
    if (n > kMaxRank) return fail("a dims list of " + std::to_string(n) + " values (max 12)");
    v.resize(n);
    for (int64_t& x : v) get(x, "i64");
  }
  void floats(std::vector<float>& v, uint32_t max) {
    uint32_t n = 0;
    get(n, "list length");
    if (!ok()) return;
    if (n > max || n > (size_ - pos_) / sizeof(float))
      return fail("a list of " + std::to_string(n) + " floats (max " + std::to_string(max) +
                  ", or past the end)");
    v.resize(n);
    for (float& x : v) get(x, "f32");
  }
  template <class T>
  void list(std::vector<T>& v, uint32_t max) {
    uint32_t n = 0;
    get(n, "list length");
    if (!ok()) return;
    if (n > max)
      return fail("a list of " + std::to_string(n) + " entries (max " + std::to_string(max) + ")");
    v.clear();
    for (uint32_t i = 0; i < n && ok(); ++i) {
      v.emplace_back();
      v.back().io(*this);
    }
  }
  // The format version the fields after the header are read in (the header's, once checked).
  uint32_t version() const { return version_; }
  void set_version(uint32_t v) { version_ = v; }
  bool ok() const { return error_.empty(); }
  bool at_end() const { return pos_ == size_; }
  size_t position() const { return pos_; }
  const std::string& error() const { return error_; }

 private:
  template <class T>
  void get(T& v, const char* what) {
    v = T{};
    if (!ok()) return;
    if (size_ - pos_ < sizeof(T)) return fail(std::string("truncated params: no room for ") + what);
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
  }
  void fail(const std::string& what) {
    if (ok()) error_ = "bad params at byte " + std::to_string(pos_) + ": " + what;
  }
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  uint32_t version_ = kParamsVersion;
  std::string error_;
};

}  // namespace collage::rt_dnnl
