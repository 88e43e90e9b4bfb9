// The binary form of a control-flow body and its checks (dyn_body.h).
#include "dyn_body.h"

#include "collage/runtime_module.h"
#include "dyn_bytes.h"

namespace collage::rt_dynamic {
namespace {

constexpr int64_t kMaxRank = 16;

void put_list(std::vector<uint8_t>& out, const std::vector<int64_t>& l) {
  put_u32(out, static_cast<uint32_t>(l.size()));
  for (int64_t v : l) put_i64(out, v);
}

void put_bytes(std::vector<uint8_t>& out, const void* data, size_t size) {
  put_u32(out, static_cast<uint32_t>(size));
  const auto* p = static_cast<const uint8_t*>(data);
  out.insert(out.end(), p, p + size);
}

bool get_list(Reader& r, std::vector<int64_t>* l) {
  uint32_t n = 0;
  if (!r.u32(&n) || n > r.left() / 8) return false;
  l->resize(n);
  for (int64_t& v : *l) r.i64(&v);
  return true;
}

bool get_string(Reader& r, std::string* s) {
  uint32_t n = 0;
  std::vector<uint8_t> b;
  if (!r.u32(&n) || !r.bytes(n, &b)) return false;
  s->assign(b.begin(), b.end());
  return true;
}

std::string check(const Body& b, int32_t num_constants) {
  const auto n = static_cast<int64_t>(b.values.size());
  std::vector<bool> given(b.values.size(), false);
  auto give = [&](int64_t v, const std::string& by) -> std::string {
    if (v < 0 || v >= n) return by + " names value " + std::to_string(v) + " of " + std::to_string(n);
    if (given[v]) return by + " gives value " + std::to_string(v) + " a second time";
    given[v] = true;
    return "";
  };
  for (int64_t i = 0; i < n; ++i) {
    const BodyValue& v = b.values[i];
    const size_t size = collage_dtype_size(v.dtype);
    if (size == 0 || v.dtype == COLLAGE_DTYPE_STRING)
      return "value " + std::to_string(i) + " has element type " + std::to_string(v.dtype);
    if (static_cast<int64_t>(v.shape.size()) > kMaxRank)
      return "value " + std::to_string(i) + " has rank " + std::to_string(v.shape.size());
    for (int64_t d : v.shape)
      if (d < -1) return "value " + std::to_string(i) + " has dimension " + std::to_string(d);
    if (v.constant < -1 || v.constant >= num_constants)
      return "value " + std::to_string(i) + " is constant " + std::to_string(v.constant) +
             " of the kernel's " + std::to_string(num_constants);
    if (v.constant >= 0)
      if (std::string e = give(i, "a constant"); !e.empty()) return e;
  }
  for (int64_t v : b.inputs)
    if (std::string e = give(v, "an input"); !e.empty()) return e;
  for (size_t s = 0; s < b.steps.size(); ++s) {
    const BodyStep& st = b.steps[s];
    const std::string who = "step " + std::to_string(s) + " '" + st.name + "'";
    if (st.num_inputs < 0 || st.num_inputs > static_cast<int64_t>(st.args.size()))
      return who + " has " + std::to_string(st.num_inputs) + " inputs of " +
             std::to_string(st.args.size()) + " arguments";
    for (int64_t a = 0; a < st.num_inputs; ++a)
      if (st.args[a] < 0 || st.args[a] >= n || !given[st.args[a]])
        return who + " reads value " + std::to_string(st.args[a]) + " before it is given";
    for (size_t a = st.num_inputs; a < st.args.size(); ++a)
      if (std::string e = give(st.args[a], who); !e.empty()) return e;
  }
  for (int64_t v : b.outputs)
    if (v < 0 || v >= n || !given[v])
      return "output value " + std::to_string(v) + " is given by nothing";
  return "";
}

}  // namespace

std::vector<uint8_t> encode_body(const Body& b) {
  std::vector<uint8_t> out;
  put_u32(out, kBodyMagic);
  put_u32(out, kBodyVersion);
  put_u32(out, static_cast<uint32_t>(b.values.size()));
  for (const BodyValue& v : b.values) {
    put_i64(out, v.dtype);
    put_list(out, v.shape);
    put_i64(out, v.constant);
  }
  put_list(out, b.inputs);
  put_list(out, b.outputs);
  put_u32(out, static_cast<uint32_t>(b.steps.size()));
  for (const BodyStep& s : b.steps) {
    put_bytes(out, s.name.data(), s.name.size());
    put_bytes(out, s.entry.data(), s.entry.size());
    put_bytes(out, s.params.data(), s.params.size());
    put_list(out, s.args);
    put_i64(out, s.num_inputs);
  }
  return out;
}

std::string decode_body(const uint8_t* data, size_t size, int32_t num_constants, Body* b) {
  Reader r(data, size);
  uint32_t magic = 0, version = 0, count = 0;
  if (!r.u32(&magic) || magic != kBodyMagic) return "a body without the DYNB magic";
  if (!r.u32(&version) || version != kBodyVersion)
    return "a body of version " + std::to_string(version) + "; this module reads version " +
           std::to_string(kBodyVersion);
  // Each value takes at least 20 bytes, each step 28: a count beyond that is damage.
  if (!r.u32(&count) || count > r.left() / 20) return "truncated body: values";
  b->values.resize(count);
  for (BodyValue& v : b->values) {
    int64_t dtype = 0;
    if (!r.i64(&dtype) || !get_list(r, &v.shape) || !r.i64(&v.constant))
      return "truncated body: values";
    v.dtype = dtype < 0 || dtype > INT32_MAX ? -1 : static_cast<int32_t>(dtype);
  }
  if (!get_list(r, &b->inputs) || !get_list(r, &b->outputs)) return "truncated body: inputs";
  if (!r.u32(&count) || count > r.left() / 28) return "truncated body: steps";
  b->steps.resize(count);
  for (BodyStep& s : b->steps) {
    uint32_t n = 0;
    if (!get_string(r, &s.name) || !get_string(r, &s.entry) || !r.u32(&n) ||
        !r.bytes(n, &s.params) || !get_list(r, &s.args) || !r.i64(&s.num_inputs))
      return "truncated body: steps";
  }
  if (r.left() != 0) return "trailing bytes after a body";
  return check(*b, num_constants);
}

}  // namespace collage::rt_dynamic
