// Binary encoding and bounds-checked decoding of Eigen kernel parameters.
#include "eigen_params.h"

#include <type_traits>

#include "../common/param_bytes.h"

namespace collage::rt_eigen {
namespace {

// Lists and programs longer than this are rejected: no real kernel comes close, and it keeps a
// corrupt count from asking for a huge allocation.
constexpr uint32_t kMaxListLength = 4096;

class Writer : public rt_common::ParamWriter {
 public:
  void operator()(const int64_t& v) { i64(v); }
  void operator()(const float& v) { f32(v); }
  void operator()(const bool& v) { u8(v ? 1 : 0); }
  void operator()(const OperandRef& r) {
    u8(static_cast<uint8_t>(r.source));
    u32(r.index);
  }
  void operator()(const EwOp& op) { u8(static_cast<uint8_t>(op)); }
  void operator()(const ReduceOp& op) { u8(static_cast<uint8_t>(op)); }
  void operator()(const int32_t& v) { u32(static_cast<uint32_t>(v)); }
  template <typename T>
  void operator()(const std::vector<T>& list) {
    u32(static_cast<uint32_t>(list.size()));
    for (const T& item : list) (*this)(item);
  }
  void operator()(const EwOperand& o);
  void operator()(const EwStep& s);
  void operator()(const EwProgram& p);
};

class Reader : public rt_common::ParamReader {
 public:
  Reader(const uint8_t* data, size_t size) : ParamReader(data, size, "parameters") {}

  void operator()(int64_t& v) { v = i64(); }
  void operator()(float& v) { v = f32(); }
  void operator()(bool& v) {
    const uint8_t b = u8();
    if (b > 1) fail("flag byte " + std::to_string(b) + " is neither 0 nor 1");
    v = b == 1;
  }
  void operator()(OperandRef& r) {
    const uint8_t source = u8();
    if (source > static_cast<uint8_t>(OperandSource::constant))
      fail("operand source " + std::to_string(source) + " is unknown");
    r.source = static_cast<OperandSource>(source);
    r.index = u32();
  }
  void operator()(EwOp& op) {
    const uint8_t v = u8();
    if (v >= static_cast<uint8_t>(EwOp::count_))
      fail("elementwise operation " + std::to_string(v) + " is unknown");
    op = static_cast<EwOp>(v);
  }
  void operator()(ReduceOp& op) {
    const uint8_t v = u8();
    if (v >= static_cast<uint8_t>(ReduceOp::count_))
      fail("reduction " + std::to_string(v) + " is unknown");
    op = static_cast<ReduceOp>(v);
  }
  void operator()(int32_t& v) { v = static_cast<int32_t>(u32()); }
  template <typename T>
  void operator()(std::vector<T>& list) {
    const uint32_t n = u32();
    if (n > kMaxListLength) {
      fail("list of " + std::to_string(n) + " elements is too long");
      return;
    }
    // Every element takes at least one byte.
    if (n > left()) {
      fail("truncated: a list of " + std::to_string(n) + " elements in " + std::to_string(left()) +
           " bytes");
      return;
    }
    list.assign(n, T{});
    for (T& item : list) {
      (*this)(item);
      if (!error().empty()) return;
    }
  }
  void operator()(EwOperand& o);
  void operator()(EwStep& s);
  void operator()(EwProgram& p);
};

// One field list per struct, shared by the writer and the reader. P is const for the writer.
template <typename V, typename P>
void visit_operand(V& v, P& o) {
  v(o.ref);
  v(o.strides);
}
template <typename V, typename P>
void visit_step(V& v, P& s) {
  v(s.op);
  v(s.operand_first);
  v(s.operand);
  v(s.p0);
  v(s.p1);
}
template <typename V, typename P>
void visit_program(V& v, P& p) {
  v(p.shape);
  v(p.operands);
  v(p.steps);
}

void Writer::operator()(const EwOperand& o) {
  visit_operand(*this, o);
}
void Writer::operator()(const EwStep& s) {
  visit_step(*this, s);
}
void Writer::operator()(const EwProgram& p) {
  visit_program(*this, p);
}
void Reader::operator()(EwOperand& o) {
  visit_operand(*this, o);
}
void Reader::operator()(EwStep& s) {
  visit_step(*this, s);
}
void Reader::operator()(EwProgram& p) {
  visit_program(*this, p);
}

template <typename V, typename P>
void visit_fields(V& v, P& p) requires std::is_same_v<std::remove_const_t<P>, MatMulParams> {
  v(p.a), v(p.b), v(p.m), v(p.n), v(p.k), v(p.trans_a), v(p.trans_b), v(p.alpha);
  v(p.batch_dims), v(p.a_batch_strides), v(p.b_batch_strides), v(p.epilogue);
}
template <typename V, typename P>
void visit_fields(V& v, P& p) requires std::is_same_v<std::remove_const_t<P>, ConvParams> {
  v(p.x), v(p.w), v(p.batch), v(p.channels), v(p.height), v(p.width);
  v(p.out_channels), v(p.kernel_h), v(p.kernel_w), v(p.out_h), v(p.out_w);
  v(p.stride_h), v(p.stride_w), v(p.dilation_h), v(p.dilation_w), v(p.pad_top), v(p.pad_left);
  v(p.group), v(p.epilogue);
}
template <typename V, typename P>
void visit_fields(V& v, P& p) requires std::is_same_v<std::remove_const_t<P>, ElementwiseParams> {
  v(p.program);
}
template <typename V, typename P>
void visit_fields(V& v, P& p) requires std::is_same_v<std::remove_const_t<P>, ReduceParams> {
  v(p.x), v(p.op), v(p.outer), v(p.extent), v(p.inner);
}
template <typename V, typename P>
void visit_fields(V& v, P& p) requires std::is_same_v<std::remove_const_t<P>, SoftmaxParams> {
  v(p.x), v(p.log), v(p.outer), v(p.extent), v(p.inner);
}

template <typename P>
std::vector<uint8_t> encode(const P& p) {
  Writer w;
  w.u32(kParamsMagic);
  w.u32(kParamsVersion);
  visit_fields(w, p);
  return w.take();
}

template <typename P>
std::string decode(const uint8_t* data, size_t size, P& p) {
  if (size > 0 && data == nullptr) return "parameters: null data with a non-zero size";
  Reader r(data, size);
  const uint32_t magic = r.u32();
  if (r.error().empty() && magic != kParamsMagic)
    return "parameters: bad magic (not Eigen kernel parameters)";
  const uint32_t version = r.u32();
  if (r.error().empty() && version != kParamsVersion)
    return "parameters: version " + std::to_string(version) + " is not supported (expected " +
           std::to_string(kParamsVersion) + ")";
  visit_fields(r, p);
  if (r.error().empty() && !r.at_end())
    r.fail(std::to_string(size - r.position()) + " unexpected trailing bytes");
  return r.error();
}

}  // namespace

bool ew_op_takes_operand(EwOp op) {
  switch (op) {
    case EwOp::load:
    case EwOp::add:
    case EwOp::add_scaled:
    case EwOp::sub:
    case EwOp::mul:
    case EwOp::div:
    case EwOp::pow:
    case EwOp::prelu:
      return true;
    default:
      return false;
  }
}

std::vector<uint8_t> encode_params(const MatMulParams& p) {
  return encode(p);
}
std::vector<uint8_t> encode_params(const ConvParams& p) {
  return encode(p);
}
std::vector<uint8_t> encode_params(const ElementwiseParams& p) {
  return encode(p);
}
std::vector<uint8_t> encode_params(const ReduceParams& p) {
  return encode(p);
}
std::vector<uint8_t> encode_params(const SoftmaxParams& p) {
  return encode(p);
}

std::string decode_params(const uint8_t* d, size_t n, MatMulParams& p) {
  return decode(d, n, p);
}
std::string decode_params(const uint8_t* d, size_t n, ConvParams& p) {
  return decode(d, n, p);
}
std::string decode_params(const uint8_t* d, size_t n, ElementwiseParams& p) {
  return decode(d, n, p);
}
std::string decode_params(const uint8_t* d, size_t n, ReduceParams& p) {
  return decode(d, n, p);
}
std::string decode_params(const uint8_t* d, size_t n, SoftmaxParams& p) {
  return decode(d, n, p);
}

}  // namespace collage::rt_eigen
