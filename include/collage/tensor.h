// Tensor: a host buffer with a shape and an element type, shared by value.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collage/dtype.h"

namespace collage {

using Shape = std::vector<int64_t>;

// A dimension known only at run time: the size of a data-dependent output (NonZero's count, the
// boxes NonMaxSuppression keeps) and of what is computed from it. A value's rank is always known.
// Tensors never have such a dimension; only the TensorType of a graph value does.
inline constexpr int64_t kDynamicDim = -1;
// True when some dimension of `shape` is kDynamicDim.
bool has_dynamic_dims(const Shape& shape);

// Number of elements of a shape (1 for a scalar, rank 0); -1 when it has a dynamic dimension.
int64_t shape_numel(const Shape& shape);
// Element count, or nullopt when a dimension is negative or the count overflows (shapes from
// untrusted models must be checked with this before anything is allocated).
std::optional<int64_t> checked_shape_numel(const Shape& shape);
// Row-major strides in elements.
std::vector<int64_t> shape_strides(const Shape& shape);
// "1x3x224x224"; "scalar" for rank 0; a dynamic dimension is "?" ("?x4").
std::string shape_to_string(const Shape& shape);

// The static type of a value: element type and shape.
struct TensorType {
  DType dtype = DType::f32;
  Shape shape;
  // -1 and 0 for a type with a dynamic dimension (its size is known only at run time).
  int64_t numel() const { return shape_numel(shape); }
  size_t bytes() const {
    return is_dynamic() ? 0 : static_cast<size_t>(numel()) * dtype_size(dtype);
  }
  bool is_dynamic() const { return has_dynamic_dims(shape); }
  bool operator==(const TensorType&) const = default;
};
// "f32[1x3x224x224]"
std::string type_to_string(const TensorType& t);
// Whether a value of type `actual` can stand for one of type `declared`: the same element type
// and rank, and the same size in every dimension that `declared` knows (is not kDynamicDim).
bool type_fits(const TensorType& actual, const TensorType& declared);

// A dense row-major host tensor. Copies share the buffer (like a shared_ptr); use clone() for a
// deep copy. The buffer is 64-byte aligned. A default-constructed Tensor is empty (no buffer).
// A `str` tensor's buffer is an array of numel() std::string (data<std::string>()), constructed
// empty and destroyed with the buffer; wrap() does not take strings.
class Tensor {
 public:
  Tensor() = default;
  // Allocates zero-initialised storage.
  Tensor(DType dtype, Shape shape);
  // Wraps external memory without owning it; `keep_alive` (may be null) is held as long as the
  // tensor, so the memory stays valid (e.g. a memory-mapped file).
  static Tensor wrap(DType dtype, Shape shape, void* data, std::shared_ptr<void> keep_alive);

  // Typed constructors for small constants, mostly used by tests and passes.
  static Tensor from_f32(Shape shape, std::span<const float> values);
  static Tensor from_i64(Shape shape, std::span<const int64_t> values);
  static Tensor scalar_f32(float v);
  static Tensor scalar_i64(int64_t v);
  static Tensor from_strings(Shape shape, std::span<const std::string> values);

  bool empty() const { return data_ == nullptr; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  const TensorType& type() const { return type_; }
  int64_t rank() const { return static_cast<int64_t>(type_.shape.size()); }
  int64_t numel() const { return type_.numel(); }
  size_t bytes() const { return type_.bytes(); }

  void* raw() { return data_; }
  const void* raw() const { return data_; }
  template <typename T>
  T* data() { return static_cast<T*>(data_); }
  template <typename T>
  const T* data() const { return static_cast<const T*>(data_); }

  Tensor clone() const;
  // Same buffer, new shape with the same element count (asserts on a mismatch).
  Tensor reshaped(Shape shape) const;
  // Element i converted to double / int64 whatever the dtype (slow; for small tensors).
  double get_as_double(int64_t i) const;
  int64_t get_as_int64(int64_t i) const;
  // All elements converted to int64 (for shape-like tensors).
  std::vector<int64_t> to_int64_vector() const;
  // Converts to another element type (float<->int conversions truncate toward zero).
  Tensor cast(DType to) const;
  // Bitwise equality of type and contents.
  bool identical(const Tensor& other) const;

 private:
  TensorType type_;
  std::shared_ptr<void> owner_;
  void* data_ = nullptr;
};

}  // namespace collage
