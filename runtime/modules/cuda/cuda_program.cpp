// Binary encoding, bounds-checked decoding and checking of GPU programs.
#include "cuda_program.h"

#include "../common/param_bytes.h"

namespace collage::rt_cuda {
namespace {

// Counts above these are rejected: no real region comes close, and it keeps a corrupt count
// from asking for a huge allocation.
constexpr uint32_t kMaxListLength = 1u << 16;
constexpr uint32_t kMaxImageBytes = 64u << 20;

enum class StepTag : uint8_t { launch = 0, gemm = 1, conv = 2 };

class Writer : public rt_common::ParamWriter {
 public:
  void flag(bool v) { u8(v ? 1 : 0); }
  void bytes(const void* p, size_t n) {
    u32(static_cast<uint32_t>(n));
    const auto* b = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  void offsets(const std::vector<uint64_t>& list) {
    u32(static_cast<uint32_t>(list.size()));
    for (uint64_t v : list) u64(v);
  }
};

class Reader : public rt_common::ParamReader {
 public:
  Reader(const uint8_t* data, size_t size) : ParamReader(data, size, "gpu program") {}
  bool flag() {
    const uint8_t b = u8();
    if (b > 1) fail("flag byte " + std::to_string(b) + " is neither 0 nor 1");
    return b == 1;
  }
  uint32_t count(uint32_t max, const char* what) {
    const uint32_t n = u32();
    if (n > max)
      fail(std::string(what) + " count " + std::to_string(n) + " is over " + std::to_string(max));
    return error().empty() ? n : 0;
  }
  void bytes(uint32_t max, const char* what, std::vector<uint8_t>* out) {
    const uint32_t n = count(max, what);
    if (const uint8_t* p = take(n)) out->assign(p, p + n);
  }
  void offsets(std::vector<uint64_t>* list) {
    list->resize(count(kMaxListLength, "offset"));
    for (uint64_t& v : *list) v = u64();
  }
};

void write_step(Writer& w, const LaunchStep& s) {
  w.u8(static_cast<uint8_t>(StepTag::launch));
  w.u32(s.image);
  w.bytes(s.function.data(), s.function.size());
  for (uint32_t v : s.grid) w.u32(v);
  for (uint32_t v : s.block) w.u32(v);
  w.u32(s.shared_bytes);
  w.offsets(s.args);
}

void write_step(Writer& w, const GemmStep& s) {
  w.u8(static_cast<uint8_t>(StepTag::gemm));
  w.flag(s.trans_a);
  w.flag(s.trans_b);
  for (int64_t v :
       {s.m, s.n, s.k, s.batch, s.lda, s.ldb, s.ldc, s.stride_a, s.stride_b, s.stride_c})
    w.i64(v);
  w.f32(s.alpha);
  w.f32(s.beta);
  for (uint64_t v : {s.a, s.b, s.c}) w.u64(v);
}

void write_step(Writer& w, const ConvStep& s) {
  w.u8(static_cast<uint8_t>(StepTag::conv));
  for (int64_t v : {s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, s.pad_h, s.pad_w, s.stride_h, s.stride_w,
                    s.dilation_h, s.dilation_w, s.groups})
    w.i64(v);
  w.flag(s.has_bias);
  w.u8(static_cast<uint8_t>(s.activation));
  for (uint64_t v : {s.x, s.weight, s.bias, s.y}) w.u64(v);
}

Step read_step(Reader& r) {
  const uint8_t tag = r.u8();
  switch (static_cast<StepTag>(tag)) {
    case StepTag::launch: {
      LaunchStep s;
      s.image = r.u32();
      std::vector<uint8_t> name;
      r.bytes(1024, "kernel name byte", &name);
      s.function.assign(name.begin(), name.end());
      for (uint32_t& v : s.grid) v = r.u32();
      for (uint32_t& v : s.block) v = r.u32();
      s.shared_bytes = r.u32();
      r.offsets(&s.args);
      return s;
    }
    case StepTag::gemm: {
      GemmStep s;
      s.trans_a = r.flag();
      s.trans_b = r.flag();
      for (int64_t* v : {&s.m, &s.n, &s.k, &s.batch, &s.lda, &s.ldb, &s.ldc, &s.stride_a,
                         &s.stride_b, &s.stride_c})
        *v = r.i64();
      s.alpha = r.f32();
      s.beta = r.f32();
      for (uint64_t* v : {&s.a, &s.b, &s.c}) *v = r.u64();
      return s;
    }
    case StepTag::conv: {
      ConvStep s;
      for (int64_t* v : {&s.n, &s.c, &s.h, &s.w, &s.o, &s.kh, &s.kw, &s.pad_h, &s.pad_w,
                         &s.stride_h, &s.stride_w, &s.dilation_h, &s.dilation_w, &s.groups})
        *v = r.i64();
      s.has_bias = r.flag();
      const uint8_t act = r.u8();
      if (act > static_cast<uint8_t>(ConvActivation::relu))
        r.fail("convolution activation " + std::to_string(act) + " is unknown");
      s.activation = static_cast<ConvActivation>(act);
      for (uint64_t* v : {&s.x, &s.weight, &s.bias, &s.y}) *v = r.u64();
      return s;
    }
  }
  r.fail("step kind " + std::to_string(tag) + " is unknown");
  return LaunchStep{};
}

}  // namespace

std::vector<uint8_t> encode_program(const GpuProgram& p) {
  Writer w;
  w.u32(kProgramMagic);
  w.u32(kProgramVersion);
  w.u64(p.arena_bytes);
  w.offsets(p.arg_offsets);
  w.offsets(p.constant_offsets);
  w.u32(static_cast<uint32_t>(p.images.size()));
  for (const std::vector<uint8_t>& image : p.images) w.bytes(image.data(), image.size());
  w.u32(static_cast<uint32_t>(p.steps.size()));
  for (const Step& s : p.steps) std::visit([&](const auto& step) { write_step(w, step); }, s);
  w.flag(p.use_graph);
  return w.take();
}

std::string decode_program(const uint8_t* data, size_t size, GpuProgram* out) {
  Reader r(data, size);
  if (const uint32_t magic = r.u32(); r.error().empty() && magic != kProgramMagic)
    return "gpu program: not a GPU program (magic " + std::to_string(magic) + ")";
  if (const uint32_t version = r.u32(); r.error().empty() && version != kProgramVersion)
    return "gpu program: format version " + std::to_string(version) + " is not " +
           std::to_string(kProgramVersion) + ", the one this module reads";
  GpuProgram p;
  p.arena_bytes = r.u64();
  r.offsets(&p.arg_offsets);
  r.offsets(&p.constant_offsets);
  p.images.resize(r.count(256, "image"));
  for (std::vector<uint8_t>& image : p.images) r.bytes(kMaxImageBytes, "image byte", &image);
  const uint32_t steps = r.count(kMaxListLength, "step");
  for (uint32_t i = 0; i < steps && r.error().empty(); ++i) p.steps.push_back(read_step(r));
  p.use_graph = r.flag();
  if (r.error().empty() && !r.at_end()) r.fail("trailing bytes");
  if (!r.error().empty()) return r.error();
  *out = std::move(p);
  return "";
}

}  // namespace collage::rt_cuda
