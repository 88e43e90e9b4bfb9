// check_program(): every offset a GPU program uses is aligned and inside its arena, and every
// step's shape is one the step can run.
#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda_program.h"

namespace collage::rt_cuda {
namespace {

std::string bytes_text(uint64_t n) {
  return std::to_string(n) + " bytes";
}

class Checker {
 public:
  explicit Checker(uint64_t arena) : arena_(arena) {}
  const std::string& error() const { return error_; }
  void fail(const std::string& m) {
    if (error_.empty()) error_ = "gpu program: " + m;
  }
  // `what` of `bytes` at `offset`.
  void region(const std::string& what, uint64_t offset, uint64_t bytes) {
    if (offset % kArenaAlignment != 0)
      fail(what + " at arena offset " + std::to_string(offset) + " is not aligned to " +
           std::to_string(kArenaAlignment));
    else if (offset > arena_ || bytes > arena_ - offset)
      fail(what + " (" + bytes_text(bytes) + " at offset " + std::to_string(offset) +
           ") does not fit the arena of " + bytes_text(arena_));
  }
  // Positive dimensions whose f32 element count fits 2^62 bytes.
  uint64_t elements(const std::string& what, std::initializer_list<int64_t> dims) {
    uint64_t n = 1;
    for (int64_t d : dims) {
      if (d <= 0) {
        fail(what + " has a dimension " + std::to_string(d) + " that is not positive");
        return 0;
      }
      if (n > (uint64_t{1} << 60) / static_cast<uint64_t>(d)) {
        fail(what + " is too large");
        return 0;
      }
      n *= static_cast<uint64_t>(d);
    }
    return n;
  }

 private:
  uint64_t arena_;
  std::string error_;
};

// The f32 bytes a strided batch of `rows` x `cols` matrices with row stride `ld` spans.
uint64_t matrix_span(Checker& c, const std::string& what, int64_t batch, int64_t stride,
                     int64_t rows, int64_t cols, int64_t ld) {
  if (ld < cols) {
    c.fail(what + " row stride " + std::to_string(ld) + " is below its " + std::to_string(cols) +
           " columns");
    return 0;
  }
  if (batch > 1 && stride < 0) c.fail(what + " batch stride is negative");
  // In 128 bits, so that a corrupt stride cannot wrap around into the arena.
  const unsigned __int128 span =
      4 * (static_cast<unsigned __int128>(batch - 1) *
               static_cast<uint64_t>(std::max<int64_t>(stride, 0)) +
           static_cast<unsigned __int128>(rows - 1) * static_cast<uint64_t>(ld) + cols);
  return span > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(span);
}

void check_step(Checker& c, const GpuProgram& p, size_t i, const LaunchStep& s) {
  const std::string what = "step " + std::to_string(i) + " (launch of " + s.function + ")";
  if (s.image >= p.images.size())
    c.fail(what + " names cubin " + std::to_string(s.image) + " of " +
           std::to_string(p.images.size()));
  if (s.function.empty()) c.fail(what + " has no kernel name");
  for (uint32_t v : s.grid)
    if (v == 0) c.fail(what + " has an empty grid");
  uint64_t threads = 1;
  for (uint32_t v : s.block) threads *= v;
  if (threads == 0 || threads > 1024)
    c.fail(what + " has " + std::to_string(threads) + " threads per block (1 to 1024)");
  for (size_t a = 0; a < s.args.size(); ++a)
    c.region(what + " argument " + std::to_string(a), s.args[a], 0);
}

void check_step(Checker& c, const GpuProgram&, size_t i, const GemmStep& s) {
  const std::string what = "step " + std::to_string(i) + " (GEMM)";
  c.elements(what, {s.m, s.n, s.k, s.batch});
  if (!c.error().empty()) return;
  const int64_t a_rows = s.trans_a ? s.k : s.m, a_cols = s.trans_a ? s.m : s.k;
  const int64_t b_rows = s.trans_b ? s.n : s.k, b_cols = s.trans_b ? s.k : s.n;
  c.region(what + " A", s.a,
           matrix_span(c, what + " A", s.batch, s.stride_a, a_rows, a_cols, s.lda));
  c.region(what + " B", s.b,
           matrix_span(c, what + " B", s.batch, s.stride_b, b_rows, b_cols, s.ldb));
  c.region(what + " C", s.c, matrix_span(c, what + " C", s.batch, s.stride_c, s.m, s.n, s.ldc));
}

void check_step(Checker& c, const GpuProgram&, size_t i, const ConvStep& s) {
  const std::string what = "step " + std::to_string(i) + " (convolution)";
  c.elements(what, {s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, s.stride_h, s.stride_w, s.dilation_h,
                    s.dilation_w, s.groups});
  if (!c.error().empty()) return;
  if (s.pad_h < 0 || s.pad_w < 0) return c.fail(what + " has negative padding");
  if (s.c % s.groups != 0 || s.o % s.groups != 0)
    return c.fail(what + ": " + std::to_string(s.c) + " input and " + std::to_string(s.o) +
                  " output channels are not divisible by " + std::to_string(s.groups) + " groups");
  if (s.out_h() <= 0 || s.out_w() <= 0)
    return c.fail(what + ": the window is larger than the padded input");
  c.region(what + " input", s.x, 4 * c.elements(what, {s.n, s.c, s.h, s.w}));
  c.region(what + " weight", s.weight, 4 * c.elements(what, {s.o, s.c / s.groups, s.kh, s.kw}));
  if (s.has_bias) c.region(what + " bias", s.bias, 4 * static_cast<uint64_t>(s.o));
  c.region(what + " output", s.y, 4 * c.elements(what, {s.n, s.o, s.out_h(), s.out_w()}));
}

}  // namespace

std::string check_program(const GpuProgram& p, const std::vector<uint64_t>& arg_bytes,
                          const std::vector<uint64_t>& constant_bytes) {
  Checker c(p.arena_bytes);
  if (p.arg_offsets.size() != arg_bytes.size())
    c.fail("places " + std::to_string(p.arg_offsets.size()) + " arguments; the kernel has " +
           std::to_string(arg_bytes.size()));
  if (p.constant_offsets.size() != constant_bytes.size())
    c.fail("places " + std::to_string(p.constant_offsets.size()) + " constants; the kernel has " +
           std::to_string(constant_bytes.size()));
  if (p.steps.empty()) c.fail("has no steps");
  for (size_t i = 0; c.error().empty() && i < arg_bytes.size(); ++i)
    c.region("argument " + std::to_string(i), p.arg_offsets[i], arg_bytes[i]);
  for (size_t i = 0; c.error().empty() && i < constant_bytes.size(); ++i)
    c.region("constant " + std::to_string(i), p.constant_offsets[i], constant_bytes[i]);
  for (size_t i = 0; c.error().empty() && i < p.steps.size(); ++i)
    std::visit([&](const auto& s) { check_step(c, p, i, s); }, p.steps[i]);
  return c.error();
}

}  // namespace collage::rt_cuda
