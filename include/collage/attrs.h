// Typed operator attributes: each operator declares a struct whose fields are listed once in a
// visit() method; printing, hashing, equality, parsing and serialisation all derive from it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "collage/tensor.h"

namespace collage {

class Graph;  // collage/graph.h
// A subgraph attribute (the branches of If, the bodies of Loop and Scan): shared and immutable.
using GraphAttr = std::shared_ptr<const Graph>;

// Receives each field of an attribute struct by name. Implementations read (print, hash) or
// write (parse) the fields.
class AttrVisitor {
 public:
  virtual ~AttrVisitor() = default;
  virtual void field(const char* name, int64_t& v) = 0;
  virtual void field(const char* name, float& v) = 0;
  virtual void field(const char* name, std::string& v) = 0;
  virtual void field(const char* name, std::vector<int64_t>& v) = 0;
  virtual void field(const char* name, std::vector<float>& v) = 0;
  virtual void field(const char* name, Tensor& v) = 0;
  // A subgraph. Visitors that have nothing to do with one need not override this.
  virtual void field(const char* name, GraphAttr& v) {
    (void)name;
    (void)v;
  }
};

// Base of every attribute struct. Instances are immutable once attached to a node.
class OpAttrs {
 public:
  virtual ~OpAttrs() = default;
  // Lists every field. Visitors that only read must not be used to modify a shared instance.
  virtual void visit(AttrVisitor& v) = 0;
  virtual std::unique_ptr<OpAttrs> clone() const = 0;

  // "strides=[1,1], group=1"; fields equal to their default are still printed.
  std::string to_string() const;
  // Stable across processes (FNV-1a over names and values), used in cost-database keys.
  uint64_t hash() const;
  bool equals(const OpAttrs& other) const;
};

// CRTP helper giving clone() for a struct that defines `template <class V> void fields(V&)`.
template <typename Derived>
class AttrsOf : public OpAttrs {
 public:
  void visit(AttrVisitor& v) override { static_cast<Derived*>(this)->fields(v); }
  std::unique_ptr<OpAttrs> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

// Attributes of an operator that has none.
struct NoAttrs : AttrsOf<NoAttrs> {
  template <class V>
  void fields(V&) {}
};

// An untyped attribute value as it comes from a model file.
using AttrValue =
    std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>, Tensor>;
using AttrMap = std::map<std::string, AttrValue>;

// Fills `attrs` from `values`: fields present in the map overwrite the struct's defaults.
// A value of the wrong kind, or a name that is no field of the struct, is an InvalidArgument
// error naming the attribute (ints are accepted for float fields).
absl::Status fill_attrs(OpAttrs& attrs, const AttrMap& values);

}  // namespace collage
