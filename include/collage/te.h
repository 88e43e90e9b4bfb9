// Tensor expressions (TVM's TE): immutable expression nodes, placeholders, computes and reductions,
// the language in which collage's generated-code operators (and users' own operators) are written.
//
//   te::Tensor A = te::placeholder({m, k}, DType::f32, "A");
//   te::Tensor B = te::placeholder({k, n}, DType::f32, "B");
//   te::IterVar r = te::reduce_axis({0, k}, "r");
//   te::Tensor C = te::compute({m, n}, [&](te::Var i, te::Var j) {
//     return te::sum(A(i, r) * B(r, j), {r});
//   }, "C");
//
// Shapes are static (int64 extents); axis and index variables are i64. Expressions are built
// freely: type mismatches are resolved by promotion (see make_binary), and structural mistakes
// (wrong number of indices, a reduction that is not the outermost expression) are reported as
// absl::Status errors when the computation is scheduled or lowered, never by aborting.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "collage/dtype.h"
#include "collage/tensor.h"

namespace collage::te {

// The binary operator kinds, each held by `node` (BinaryNode); a sub-list of the one below.
#define COLLAGE_TE_BINARY_KINDS(X, node) \
  X(Add, node)                           \
  X(Sub, node)                           \
  X(Mul, node)                           \
  X(Div, node)                           \
  X(Mod, node)                           \
  X(FloorDiv, node)                      \
  X(FloorMod, node)                      \
  X(Min, node)                           \
  X(Max, node)                           \
  X(EQ, node)                            \
  X(NE, node)                            \
  X(LT, node)                            \
  X(LE, node)                            \
  X(GT, node)                            \
  X(GE, node)                            \
  X(And, node)                           \
  X(Or, node)

// Every expression node kind with the class that holds it. This one list generates the kind
// enum, the printer's and the visitors' dispatch (loop_ir.h). The binary kinds stay contiguous
// (is_binary() relies on it).
#define COLLAGE_TE_EXPR_NODES(X)         \
  X(IntImm, IntImmNode)                  \
  X(FloatImm, FloatImmNode)              \
  X(Var, VarNode)                        \
  COLLAGE_TE_BINARY_KINDS(X, BinaryNode) \
  X(Not, NotNode)                        \
  X(Select, SelectNode)                  \
  X(Cast, CastNode)                      \
  X(Call, CallNode)                      \
  X(ProducerLoad, ProducerLoadNode)      \
  X(Load, LoadNode)                      \
  X(Reduce, ReduceNode)

enum class ExprKind : uint8_t {
#define COLLAGE_TE_KIND_ENUM(kind, node) kind,
  COLLAGE_TE_EXPR_NODES(COLLAGE_TE_KIND_ENUM)
#undef COLLAGE_TE_KIND_ENUM
};
// "Add", "FloorDiv", ...
std::string_view expr_kind_name(ExprKind k);
// True for the binary kinds Add..Or.
bool is_binary(ExprKind k);
// True for EQ, NE, LT, LE, GT, GE.
bool is_comparison(ExprKind k);

class ExprNode {
 public:
  virtual ~ExprNode() = default;
  const ExprKind kind;
  const DType dtype;

 protected:
  ExprNode(ExprKind k, DType t) : kind(k), dtype(t) {}
};

// A shared handle to an immutable expression node (may be undefined, like a null pointer).
// Arithmetic operators build new nodes; `==` on two Exprs builds an EQ node: use same_as() for
// identity. C++ numbers convert implicitly: integers to i64 immediates, floating point to f32.
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  template <typename T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Expr(T v)
      : Expr(make_int(static_cast<int64_t>(v))) {}
  template <typename T>
  requires std::is_floating_point_v<T> Expr(T v) : Expr(make_float(static_cast<double>(v))) {}
  Expr(bool v);

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  ExprKind kind() const { return node_->kind; }
  DType dtype() const { return node_->dtype; }
  bool same_as(const Expr& o) const { return node_ == o.node_; }
  // The node as class N, or null when the kind does not match.
  template <typename N>
  const N* as() const {
    return node_ && N::classof(node_->kind) ? static_cast<const N*>(node_.get()) : nullptr;
  }
  const std::shared_ptr<const ExprNode>& node() const { return node_; }

 private:
  static Expr make_int(int64_t v);
  static Expr make_float(double v);
  std::shared_ptr<const ExprNode> node_;
};

struct IntImmNode : ExprNode {
  IntImmNode(DType t, int64_t v) : ExprNode(ExprKind::IntImm, t), value(v) {}
  static bool classof(ExprKind k) { return k == ExprKind::IntImm; }
  const int64_t value;
};

struct FloatImmNode : ExprNode {
  FloatImmNode(DType t, double v) : ExprNode(ExprKind::FloatImm, t), value(v) {}
  static bool classof(ExprKind k) { return k == ExprKind::FloatImm; }
  const double value;
};

// A variable: identity is the node, the name is for printing only.
struct VarNode : ExprNode {
  VarNode(DType t, std::string n) : ExprNode(ExprKind::Var, t), name(std::move(n)) {}
  static bool classof(ExprKind k) { return k == ExprKind::Var; }
  const std::string name;
};

class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, DType t = DType::i64);
  const VarNode* get() const { return static_cast<const VarNode*>(Expr::get()); }
  const VarNode* operator->() const { return get(); }
  const std::string& name() const { return get()->name; }
};

struct BinaryNode : ExprNode {
  BinaryNode(ExprKind k, DType t, Expr x, Expr y)
      : ExprNode(k, t), a(std::move(x)), b(std::move(y)) {}
  static bool classof(ExprKind k) { return is_binary(k); }
  const Expr a, b;
};

struct NotNode : ExprNode {
  explicit NotNode(Expr x) : ExprNode(ExprKind::Not, DType::boolean), a(std::move(x)) {}
  static bool classof(ExprKind k) { return k == ExprKind::Not; }
  const Expr a;
};

struct SelectNode : ExprNode {
  SelectNode(DType t, Expr c, Expr x, Expr y)
      : ExprNode(ExprKind::Select, t),
        cond(std::move(c)),
        true_value(std::move(x)),
        false_value(std::move(y)) {}
  static bool classof(ExprKind k) { return k == ExprKind::Select; }
  const Expr cond, true_value, false_value;
};

// Conversion to `dtype` (float to integer truncates toward zero; to bool tests for non-zero).
struct CastNode : ExprNode {
  CastNode(DType t, Expr x) : ExprNode(ExprKind::Cast, t), value(std::move(x)) {}
  static bool classof(ExprKind k) { return k == ExprKind::Cast; }
  const Expr value;
};

// The pure functions expressions may call: math on floating-point values (exp .. atanh), bit
// operations on integers (bit_and .. shift_right, shifting by the width or more gives 0; right
// shifts of signed values keep the sign), and `reinterpret`, the bits of a value read as another
// type of the same width (built by reinterpret(), which names the result type).
enum class Intrinsic : uint8_t {
  exp,
  log,
  tanh,
  erf,
  sqrt,
  rsqrt,
  pow,
  fabs,
  sigmoid,
  floor,
  ceil,
  round,
  sin,
  cos,
  tan,
  asin,
  acos,
  atan,
  sinh,
  cosh,
  asinh,
  acosh,
  atanh,
  bit_and,
  bit_or,
  bit_xor,
  bit_not,
  shift_left,
  shift_right,
  reinterpret
};
// True for the bit operations and reinterpret, whose operands are not converted to floats.
bool is_bit_intrinsic(Intrinsic f);
std::string_view intrinsic_name(Intrinsic f);
int intrinsic_arity(Intrinsic f);

struct CallNode : ExprNode {
  CallNode(DType t, Intrinsic f, std::vector<Expr> a)
      : ExprNode(ExprKind::Call, t), op(f), args(std::move(a)) {}
  static bool classof(ExprKind k) { return k == ExprKind::Call; }
  const Intrinsic op;
  const std::vector<Expr> args;
};

// ---------------------------------------------------------------------------------------------
// Iteration axes and tensors.

// A half-open integer range [min, min + extent).
struct Range {
  int64_t min = 0;
  int64_t extent = 0;
};

enum class IterKind : uint8_t { data_par, reduce };

struct IterVarNode {
  Var var;
  Range dom;
  IterKind kind;
};

// An axis of a computation: a variable with its domain. Converts to its variable in expressions.
class IterVar {
 public:
  IterVar() = default;
  IterVar(Var var, Range dom, IterKind kind);
  bool defined() const { return node_ != nullptr; }
  const IterVarNode* get() const { return node_.get(); }
  const IterVarNode* operator->() const { return node_.get(); }
  const Var& var() const { return node_->var; }
  const std::string& name() const { return node_->var.name(); }
  const Range& dom() const { return node_->dom; }
  IterKind kind() const { return node_->kind; }
  bool same_as(const IterVar& o) const { return node_ == o.node_; }
  operator Expr() const { return node_->var; }

 private:
  std::shared_ptr<const IterVarNode> node_;
};

enum class OpKind : uint8_t { placeholder, compute };

struct TensorNode;

// The result of a placeholder or a compute: a multi-dimensional array with a static shape.
// Calling it with indices reads an element (a ProducerLoad expression).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<const TensorNode> node) : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  const TensorNode* get() const { return node_.get(); }
  const TensorNode* operator->() const { return node_.get(); }
  bool same_as(const Tensor& o) const { return node_ == o.node_; }

  const std::string& name() const;
  const Shape& shape() const;
  DType dtype() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  OpKind op_kind() const;
  // Data-parallel axis i of a compute (the variable the index function received).
  IterVar axis(int i) const;
  // Reduction axis i of a compute whose body is a reduction.
  IterVar reduce_axis(int i) const;

  Expr operator()(std::vector<Expr> indices) const;
  template <typename... I>
  requires(sizeof...(I) > 0 && (std::is_convertible_v<I, Expr> && ...)) Expr operator()(
      I... indices) const {
    return (*this)(std::vector<Expr>{Expr(indices)...});
  }

 private:
  std::shared_ptr<const TensorNode> node_;
};

struct TensorNode {
  std::string name;
  Shape shape;
  DType dtype = DType::f32;
  OpKind kind = OpKind::placeholder;
  std::vector<IterVar> axis;         // compute: one data-parallel axis per dimension
  std::vector<IterVar> reduce_axis;  // compute with a reduction body: its axes
  Expr body;                         // compute: the value of element (axis...)
  std::string tag;                   // free-form label for schedules ("dense", "pack", ...)
  // A mistake found while building the compute (wrong index-function arity); reported by
  // create_schedule / lower.
  std::string error;
};

// Element `indices` of a tensor produced by a placeholder or compute.
struct ProducerLoadNode : ExprNode {
  ProducerLoadNode(DType t, Tensor p, std::vector<Expr> i)
      : ExprNode(ExprKind::ProducerLoad, t), producer(std::move(p)), indices(std::move(i)) {}
  static bool classof(ExprKind k) { return k == ExprKind::ProducerLoad; }
  const Tensor producer;
  const std::vector<Expr> indices;
};

enum class ReduceOp : uint8_t { sum, max, min, prod };
std::string_view reduce_op_name(ReduceOp op);

// Reduction of `source` over `axis` with `combiner`, starting from `init` (the identity of the
// combiner unless given). Only valid as the outermost expression of a compute body.
struct ReduceNode : ExprNode {
  ReduceNode(DType t, ReduceOp o, Expr s, std::vector<IterVar> ax, Expr i)
      : ExprNode(ExprKind::Reduce, t),
        op(o),
        source(std::move(s)),
        axis(std::move(ax)),
        init(std::move(i)) {}
  static bool classof(ExprKind k) { return k == ExprKind::Reduce; }
  const ReduceOp op;
  const Expr source;
  const std::vector<IterVar> axis;
  const Expr init;
};

// Read of a loop-IR buffer; defined in loop_ir.h (lowering turns ProducerLoads into Loads).
struct LoadNode;

// ---------------------------------------------------------------------------------------------
// Expression constructors. Binary arithmetic promotes mismatched operands: an immediate takes the
// other operand's type; otherwise float beats integer, the wider integer wins, bool becomes the
// other type, and f16/bf16 compute in f32 (they are storage types).

Expr make_int(DType t, int64_t v);
Expr make_float(DType t, double v);
// The constant `v` in type `t` (IntImm or FloatImm).
Expr make_const(DType t, double v);
Expr make_binary(ExprKind k, Expr a, Expr b);
Expr cast(DType t, Expr v);
Expr select(Expr cond, Expr true_value, Expr false_value);
Expr call(Intrinsic f, std::vector<Expr> args);
Expr minimum(Expr a, Expr b);
Expr maximum(Expr a, Expr b);
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
// Truncating integer division / remainder (C semantics); true division for floats.
Expr div(Expr a, Expr b);
Expr mod(Expr a, Expr b);
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);
Expr logical_not(Expr a);

Expr exp(Expr x);
Expr log(Expr x);
Expr tanh(Expr x);
Expr erf(Expr x);
Expr sqrt(Expr x);
Expr rsqrt(Expr x);
Expr pow(Expr x, Expr y);
Expr fabs(Expr x);
Expr sigmoid(Expr x);
Expr floor(Expr x);
Expr ceil(Expr x);
Expr round(Expr x);  // half to even, like ONNX Round
Expr sin(Expr x);
Expr cos(Expr x);
Expr tan(Expr x);
Expr asin(Expr x);
Expr acos(Expr x);
Expr atan(Expr x);
Expr sinh(Expr x);
Expr cosh(Expr x);
Expr asinh(Expr x);
Expr acosh(Expr x);
Expr atanh(Expr x);
// Integer bit operations (operands promoted to one type).
Expr bit_and(Expr a, Expr b);
Expr bit_or(Expr a, Expr b);
Expr bit_xor(Expr a, Expr b);
Expr bit_not(Expr a);
Expr shift_left(Expr a, Expr n);
Expr shift_right(Expr a, Expr n);
// The bits of `v` as a value of `t` (same width in bytes; not bool).
Expr reinterpret(DType t, Expr v);

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);  // div()
Expr operator%(Expr a, Expr b);  // mod()
Expr operator-(Expr a);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);

// The identity of a reduction in type t (0, lowest, highest).
Expr reduce_identity(ReduceOp op, DType t);
Expr sum(Expr source, std::vector<IterVar> axes);
Expr sum(Expr source, std::vector<IterVar> axes, Expr init);
Expr max(Expr source, std::vector<IterVar> axes);
Expr max(Expr source, std::vector<IterVar> axes, Expr init);
Expr min(Expr source, std::vector<IterVar> axes);
Expr min(Expr source, std::vector<IterVar> axes, Expr init);
Expr prod(Expr source, std::vector<IterVar> axes);
// The reduction `op` of `source` over `axes`, and one step of it on two values (a + b, max, ...).
Expr reduce(ReduceOp op, Expr source, std::vector<IterVar> axes);
Expr reduce_step(ReduceOp op, Expr a, Expr b);

// The value of an integer (or bool) immediate; nullopt for anything else.
std::optional<int64_t> as_const_int(const Expr& e);

// Structural equality (same shape of tree, same variables by identity, same constants).
bool structural_equal(const Expr& a, const Expr& b);

// Readable infix form, e.g. "((i*4) + j)"; "<undef>" for an undefined Expr.
std::string to_string(const Expr& e);

// ---------------------------------------------------------------------------------------------
// Operations.

// A new reduction axis over `dom`.
IterVar reduce_axis(Range dom, std::string name);

// An input tensor of the given shape.
Tensor placeholder(Shape shape, DType dtype, std::string name);

// out(i...) = f(i...): `f` receives one Var per dimension and returns the element's value, whose
// type is the tensor's type.
Tensor compute(Shape shape, const std::function<Expr(const std::vector<Var>&)>& f, std::string name,
               std::string tag = "");

namespace detail {
template <typename F, size_t... I>
constexpr bool invocable_with_vars(std::index_sequence<I...>) {
  return std::is_invocable_r_v<Expr, F, decltype((void)I, Var())...>;
}
template <typename F>
constexpr int index_function_arity() {
  if constexpr (invocable_with_vars<F>(std::make_index_sequence<0>()))
    return 0;
  else if constexpr (invocable_with_vars<F>(std::make_index_sequence<1>()))
    return 1;
  else if constexpr (invocable_with_vars<F>(std::make_index_sequence<2>()))
    return 2;
  else if constexpr (invocable_with_vars<F>(std::make_index_sequence<3>()))
    return 3;
  else if constexpr (invocable_with_vars<F>(std::make_index_sequence<4>()))
    return 4;
  else if constexpr (invocable_with_vars<F>(std::make_index_sequence<5>()))
    return 5;
  else if constexpr (invocable_with_vars<F>(std::make_index_sequence<6>()))
    return 6;
  else if constexpr (invocable_with_vars<F>(std::make_index_sequence<7>()))
    return 7;
  else if constexpr (invocable_with_vars<F>(std::make_index_sequence<8>()))
    return 8;
  else
    return -1;
}
template <typename F, size_t... I>
Expr call_with_vars(F& f, const std::vector<Var>& v, std::index_sequence<I...>) {
  return f(v[I]...);
}
// compute() whose index function was declared with `arity` parameters.
Tensor compute_n(Shape shape, int arity, const std::function<Expr(const std::vector<Var>&)>& f,
                 std::string name, std::string tag);
}  // namespace detail

// Overload for index functions taking 0..8 separate Var parameters: [](Var i, Var j) { ... }
// (none for a rank-0 tensor).
// A rank that differs from the parameter count is reported when the tensor is scheduled.
template <typename F>
requires(detail::index_function_arity<F>() >= 0) Tensor
    compute(Shape shape, F f, std::string name, std::string tag = "") {
  constexpr int n = detail::index_function_arity<F>();
  return detail::compute_n(
      std::move(shape), n,
      [&f](const std::vector<Var>& v) {
        return detail::call_with_vars(f, v, std::make_index_sequence<n>());
      },
      std::move(name), std::move(tag));
}

// The tensors a compute reads directly, in order of first appearance in its body.
std::vector<Tensor> input_tensors(const Tensor& t);

}  // namespace collage::te
