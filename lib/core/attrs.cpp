// Generic printing, hashing, comparison and parsing of typed attribute structs.
#include "collage/attrs.h"

#include <cstring>
#include <sstream>

#include "collage/graph.h"
#include "core/str_cat.h"

namespace collage {
namespace {

class Printer : public AttrVisitor {
 public:
  std::string out;
  void field(const char* n, int64_t& v) override { add(n, std::to_string(v)); }
  void field(const char* n, float& v) override {
    std::ostringstream s;
    s << v;
    add(n, s.str());
  }
  void field(const char* n, std::string& v) override { add(n, "\"" + v + "\""); }
  void field(const char* n, std::vector<int64_t>& v) override { add(n, list(v)); }
  void field(const char* n, std::vector<float>& v) override { add(n, list(v)); }
  void field(const char* n, Tensor& v) override {
    add(n, v.empty() ? "none" : type_to_string(v.type()));
  }
  void field(const char* n, GraphAttr& v) override {
    add(n, v ? str_cat("graph '", v->name(), "' (", v->nodes().size(), " nodes)") : "none");
  }

 private:
  template <typename T>
  static std::string list(const std::vector<T>& v) {
    std::ostringstream s;
    s << '[';
    for (size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
    s << ']';
    return s.str();
  }
  void add(const char* n, const std::string& v) {
    if (!out.empty()) out += ", ";
    out += n;
    out += '=';
    out += v;
  }
};

// FNV-1a over the bytes of every field, names included.
class Hasher : public AttrVisitor {
 public:
  uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, size_t n) {
    auto* c = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= c[i];
      h *= 1099511628211ull;
    }
  }
  void name(const char* n) { bytes(n, std::strlen(n) + 1); }
  void field(const char* n, int64_t& v) override { name(n), bytes(&v, sizeof v); }
  void field(const char* n, float& v) override { name(n), bytes(&v, sizeof v); }
  void field(const char* n, std::string& v) override { name(n), bytes(v.data(), v.size() + 1); }
  void field(const char* n, std::vector<int64_t>& v) override {
    name(n), bytes(v.data(), v.size() * sizeof(int64_t));
    uint64_t sz = v.size();
    bytes(&sz, sizeof sz);
  }
  void field(const char* n, std::vector<float>& v) override {
    name(n), bytes(v.data(), v.size() * sizeof(float));
    uint64_t sz = v.size();
    bytes(&sz, sizeof sz);
  }
  void field(const char* n, Tensor& v) override {
    name(n);
    if (v.empty()) return;
    uint8_t dt = static_cast<uint8_t>(v.dtype());
    bytes(&dt, 1);
    bytes(v.shape().data(), v.shape().size() * sizeof(int64_t));
    contents(v);
  }
  // A subgraph by its text and its constants' contents.
  void field(const char* n, GraphAttr& v) override {
    name(n);
    if (!v) return;
    const std::string text = print_graph(*v);
    bytes(text.data(), text.size());
    for (const Tensor& c : v->constants()) contents(c);
  }

 private:
  // A string tensor's elements are hashed by their text (its buffer holds std::string objects).
  void contents(const Tensor& t) {
    if (t.dtype() != DType::str) return bytes(t.raw(), t.bytes());
    for (int64_t i = 0; i < t.numel(); ++i) {
      const std::string& e = t.data<std::string>()[i];
      bytes(e.data(), e.size() + 1);
    }
  }
};

class Filler : public AttrVisitor {
 public:
  explicit Filler(const AttrMap& m) : m_(m) {}
  absl::Status status;
  size_t used = 0;

  void field(const char* n, int64_t& v) override { take(n, v); }
  void field(const char* n, float& v) override {
    auto it = m_.find(n);
    if (it == m_.end()) return;
    ++used;
    if (auto* i = std::get_if<int64_t>(&it->second)) {
      v = static_cast<float>(*i);
    } else if (auto* f = std::get_if<float>(&it->second)) {
      v = *f;
    } else {
      wrong(n, "a float");
    }
  }
  void field(const char* n, std::string& v) override { take(n, v); }
  void field(const char* n, std::vector<int64_t>& v) override { take(n, v); }
  void field(const char* n, std::vector<float>& v) override {
    auto it = m_.find(n);
    if (it == m_.end()) return;
    ++used;
    if (auto* f = std::get_if<std::vector<float>>(&it->second)) {
      v = *f;
    } else if (auto* i = std::get_if<std::vector<int64_t>>(&it->second)) {
      v.assign(i->begin(), i->end());
    } else {
      wrong(n, "a list of floats");
    }
  }
  void field(const char* n, Tensor& v) override { take(n, v); }
  void field(const char* n, GraphAttr&) override {
    if (!m_.count(n)) return;
    ++used;
    wrong(n, "built as a graph, not given in an attribute map");
  }

 private:
  template <typename T>
  void take(const char* n, T& v) {
    auto it = m_.find(n);
    if (it == m_.end()) return;
    ++used;
    if (auto* p = std::get_if<T>(&it->second)) {
      v = *p;
    } else {
      wrong(n, kind_name<T>());
    }
  }
  template <typename T>
  static const char* kind_name() {
    if constexpr (std::is_same_v<T, int64_t>) return "an integer";
    if constexpr (std::is_same_v<T, std::string>) return "a string";
    if constexpr (std::is_same_v<T, std::vector<int64_t>>) return "a list of integers";
    if constexpr (std::is_same_v<T, Tensor>) return "a tensor";
    return "?";
  }
  void wrong(const char* n, const char* expected) {
    if (status.ok())
      status = absl::InvalidArgumentError(str_cat("attribute '", n, "' must be ", expected));
  }
  const AttrMap& m_;
};

}  // namespace

std::string OpAttrs::to_string() const {
  Printer p;
  const_cast<OpAttrs*>(this)->visit(p);
  return p.out;
}

uint64_t OpAttrs::hash() const {
  Hasher h;
  const_cast<OpAttrs*>(this)->visit(h);
  return h.h;
}

bool OpAttrs::equals(const OpAttrs& other) const {
  if (typeid(*this) != typeid(other)) return false;
  // Field-wise comparison through the printed form, plus constants by content.
  if (to_string() != other.to_string()) return false;
  return hash() == other.hash();
}

absl::Status fill_attrs(OpAttrs& attrs, const AttrMap& values) {
  Filler f(values);
  attrs.visit(f);
  if (!f.status.ok()) return f.status;
  if (f.used != values.size()) {
    // Name the first attribute that is not a field.
    class Names : public AttrVisitor {
     public:
      std::vector<std::string> names;
      void field(const char* n, int64_t&) override { names.push_back(n); }
      void field(const char* n, float&) override { names.push_back(n); }
      void field(const char* n, std::string&) override { names.push_back(n); }
      void field(const char* n, std::vector<int64_t>&) override { names.push_back(n); }
      void field(const char* n, std::vector<float>&) override { names.push_back(n); }
      void field(const char* n, Tensor&) override { names.push_back(n); }
      void field(const char* n, GraphAttr&) override { names.push_back(n); }
    } names;
    attrs.visit(names);
    for (const auto& [k, v] : values) {
      if (std::find(names.names.begin(), names.names.end(), k) == names.names.end())
        return absl::InvalidArgumentError(str_cat("unknown attribute '", k, "'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace collage
