// The attributes of an ai.onnx.ml node by name, with typed accessors whose errors name the node
// and attribute; shared by the ai.onnx.ml converters of this folder.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/str_cat.h"

namespace collage {

class NodeAttrs {
 public:
  // How a node is named in errors: its name, else its first output's.
  static std::string shown(const onnx::NodeProto& node) {
    if (!node.name().empty() || node.output_size() == 0) return node.name();
    return node.output(0);
  }
  explicit NodeAttrs(const onnx::NodeProto& node) {
    label_ = str_cat(node.op_type(), " '", shown(node), "'");
    for (const auto& a : node.attribute()) attrs_[a.name()] = &a;
  }
  const std::string& label() const { return label_; }
  absl::Status error(std::string_view message) const {
    return absl::InvalidArgumentError(str_cat(label_, ": ", message));
  }
  absl::Status unsupported(std::string_view message) const {
    return absl::UnimplementedError(str_cat(label_, ": ", message));
  }
  bool has(const std::string& name) const { return attrs_.count(name) > 0; }

  std::vector<int64_t> ints(const std::string& name) const {
    auto it = attrs_.find(name);
    if (it == attrs_.end()) return {};
    return {it->second->ints().begin(), it->second->ints().end()};
  }
  std::vector<std::string> strings(const std::string& name) const {
    auto it = attrs_.find(name);
    if (it == attrs_.end()) return {};
    return {it->second->strings().begin(), it->second->strings().end()};
  }
  std::vector<float> floats(const std::string& name) const {
    auto it = attrs_.find(name);
    if (it == attrs_.end()) return {};
    return {it->second->floats().begin(), it->second->floats().end()};
  }
  std::string string(const std::string& name, const std::string& fallback) const {
    auto it = attrs_.find(name);
    return it == attrs_.end() ? fallback : it->second->s();
  }
  int64_t integer(const std::string& name, int64_t fallback) const {
    auto it = attrs_.find(name);
    return it == attrs_.end() ? fallback : it->second->i();
  }
  // `name` (floats) or `name`_as_tensor (a double tensor); `is_double` tells which was given.
  absl::StatusOr<std::vector<double>> numbers(const std::string& name, bool* is_double) const {
    if (is_double) *is_double = false;
    auto it = attrs_.find(name + "_as_tensor");
    if (it == attrs_.end()) {
      auto f = attrs_.find(name);
      if (f == attrs_.end()) return std::vector<double>{};
      return std::vector<double>(f->second->floats().begin(), f->second->floats().end());
    }
    if (attrs_.count(name))
      return error(str_cat("both ", name, " and ", name, "_as_tensor are set"));
    const onnx::TensorProto& t = it->second->t();
    if (t.data_type() != onnx::TensorProto::DOUBLE)
      return error(str_cat(name, "_as_tensor must hold doubles"));
    if (is_double) *is_double = true;
    if (t.has_raw_data()) {
      const std::string& raw = t.raw_data();
      if (raw.size() % 8 != 0) return error(str_cat(name, "_as_tensor has a truncated raw_data"));
      std::vector<double> out(raw.size() / 8);
      std::memcpy(out.data(), raw.data(), raw.size());
      return out;
    }
    return std::vector<double>(t.double_data().begin(), t.double_data().end());
  }

 private:
  std::string label_;
  std::map<std::string, const onnx::AttributeProto*> attrs_;
};

}  // namespace collage
