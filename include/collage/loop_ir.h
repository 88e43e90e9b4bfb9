// The loop IR that schedules lower to and code generators consume: buffers, loads, statements
// (For, Store, Let, IfThenElse, Allocate, Evaluate, Seq), PrimFunc, visitors/mutators, the
// printer, the arithmetic simplifier and the verifier.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "collage/te.h"

namespace collage::te {

// A dense row-major array the loop IR reads and writes: a kernel parameter or a local allocation.
struct BufferNode {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
};

class Buffer {
 public:
  Buffer() = default;
  Buffer(std::string name, DType dtype, Shape shape);
  bool defined() const { return node_ != nullptr; }
  const BufferNode* get() const { return node_.get(); }
  const BufferNode* operator->() const { return node_.get(); }
  bool same_as(const Buffer& o) const { return node_ == o.node_; }
  const std::string& name() const { return node_->name; }
  DType dtype() const { return node_->dtype; }
  const Shape& shape() const { return node_->shape; }

 private:
  std::shared_ptr<const BufferNode> node_;
};

// buffer[indices...] (one index per dimension).
struct LoadNode : ExprNode {
  LoadNode(Buffer b, std::vector<Expr> i)
      : ExprNode(ExprKind::Load, b.dtype()), buffer(std::move(b)), indices(std::move(i)) {}
  static bool classof(ExprKind k) { return k == ExprKind::Load; }
  const Buffer buffer;
  const std::vector<Expr> indices;
};
Expr load(Buffer buffer, std::vector<Expr> indices);

// ---------------------------------------------------------------------------------------------
// Statements.

#define COLLAGE_TE_STMT_NODES(X) \
  X(For, ForNode)                \
  X(Store, StoreNode)            \
  X(Let, LetNode)                \
  X(IfThenElse, IfThenElseNode)  \
  X(Allocate, AllocateNode)      \
  X(Evaluate, EvaluateNode)      \
  X(Seq, SeqNode)

enum class StmtKind : uint8_t {
#define COLLAGE_TE_KIND_ENUM(kind, node) kind,
  COLLAGE_TE_STMT_NODES(COLLAGE_TE_KIND_ENUM)
#undef COLLAGE_TE_KIND_ENUM
};

class StmtNode {
 public:
  virtual ~StmtNode() = default;
  const StmtKind kind;

 protected:
  explicit StmtNode(StmtKind k) : kind(k) {}
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  const StmtNode* operator->() const { return node_.get(); }
  StmtKind kind() const { return node_->kind; }
  bool same_as(const Stmt& o) const { return node_ == o.node_; }
  template <typename N>
  const N* as() const {
    return node_ && N::classof(node_->kind) ? static_cast<const N*>(node_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const StmtNode> node_;
};

// How a loop runs. `parallel`: iterations are independent and spread over tasks (see the kernel
// ABI in codegen); `vectorized`: the body runs on vectors of `extent` lanes (constant extent);
// `unrolled`: the body is repeated (constant extent); `thread_bound`: the loop is a GPU thread or
// block index named by the loop's thread_tag ("blockIdx.x", "threadIdx.x").
enum class ForKind : uint8_t { serial, parallel, vectorized, unrolled, thread_bound };
std::string_view for_kind_name(ForKind k);

// for (var = min; var < min + extent; ++var) body
struct ForNode : StmtNode {
  ForNode(Var v, Expr mn, Expr ext, ForKind k, std::string tag, Stmt b)
      : StmtNode(StmtKind::For),
        var(std::move(v)),
        min(std::move(mn)),
        extent(std::move(ext)),
        for_kind(k),
        thread_tag(std::move(tag)),
        body(std::move(b)) {}
  static bool classof(StmtKind k) { return k == StmtKind::For; }
  const Var var;
  const Expr min, extent;
  const ForKind for_kind;
  const std::string thread_tag;
  const Stmt body;
};

struct StoreNode : StmtNode {
  StoreNode(Buffer b, std::vector<Expr> i, Expr v)
      : StmtNode(StmtKind::Store),
        buffer(std::move(b)),
        indices(std::move(i)),
        value(std::move(v)) {}
  static bool classof(StmtKind k) { return k == StmtKind::Store; }
  const Buffer buffer;
  const std::vector<Expr> indices;
  const Expr value;
};

// var = value in body.
struct LetNode : StmtNode {
  LetNode(Var v, Expr x, Stmt b)
      : StmtNode(StmtKind::Let), var(std::move(v)), value(std::move(x)), body(std::move(b)) {}
  static bool classof(StmtKind k) { return k == StmtKind::Let; }
  const Var var;
  const Expr value;
  const Stmt body;
};

// else_case may be undefined.
struct IfThenElseNode : StmtNode {
  IfThenElseNode(Expr c, Stmt t, Stmt e)
      : StmtNode(StmtKind::IfThenElse),
        cond(std::move(c)),
        then_case(std::move(t)),
        else_case(std::move(e)) {}
  static bool classof(StmtKind k) { return k == StmtKind::IfThenElse; }
  const Expr cond;
  const Stmt then_case, else_case;
};

// A local buffer that lives for `body` (uninitialised).
struct AllocateNode : StmtNode {
  AllocateNode(Buffer b, Stmt s)
      : StmtNode(StmtKind::Allocate), buffer(std::move(b)), body(std::move(s)) {}
  static bool classof(StmtKind k) { return k == StmtKind::Allocate; }
  const Buffer buffer;
  const Stmt body;
};

struct EvaluateNode : StmtNode {
  explicit EvaluateNode(Expr v) : StmtNode(StmtKind::Evaluate), value(std::move(v)) {}
  static bool classof(StmtKind k) { return k == StmtKind::Evaluate; }
  const Expr value;
};

struct SeqNode : StmtNode {
  explicit SeqNode(std::vector<Stmt> s) : StmtNode(StmtKind::Seq), stmts(std::move(s)) {}
  static bool classof(StmtKind k) { return k == StmtKind::Seq; }
  const std::vector<Stmt> stmts;
};

Stmt make_for(Var var, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag = "");
Stmt make_store(Buffer buffer, std::vector<Expr> indices, Expr value);
Stmt make_let(Var var, Expr value, Stmt body);
Stmt make_if(Expr cond, Stmt then_case, Stmt else_case = Stmt());
Stmt make_allocate(Buffer buffer, Stmt body);
Stmt make_evaluate(Expr value);
// Flattens nested sequences and drops undefined statements; a single statement is returned as is.
Stmt make_seq(std::vector<Stmt> stmts);

// A kernel: parameters in calling order and a body.
struct PrimFunc {
  std::string name;
  std::vector<Buffer> params;
  Stmt body;
};

// ---------------------------------------------------------------------------------------------
// Visitors and mutators. The mutators return their input unchanged (same node) when nothing
// changed below it.

class ExprVisitor {
 public:
  virtual ~ExprVisitor() = default;
  virtual void visit(const Expr& e);

 protected:
#define COLLAGE_TE_VISIT_DECL(kind, node) virtual void visit_##kind(const node& n, const Expr& e);
  COLLAGE_TE_EXPR_NODES(COLLAGE_TE_VISIT_DECL)
#undef COLLAGE_TE_VISIT_DECL
};

class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  virtual Expr mutate(const Expr& e);

 protected:
#define COLLAGE_TE_MUTATE_DECL(kind, node) virtual Expr mutate_##kind(const node& n, const Expr& e);
  COLLAGE_TE_EXPR_NODES(COLLAGE_TE_MUTATE_DECL)
#undef COLLAGE_TE_MUTATE_DECL
};

class IRVisitor : public ExprVisitor {
 public:
  using ExprVisitor::visit;
  virtual void visit(const Stmt& s);

 protected:
#define COLLAGE_TE_VISIT_DECL(kind, node) virtual void visit_##kind(const node& n, const Stmt& s);
  COLLAGE_TE_STMT_NODES(COLLAGE_TE_VISIT_DECL)
#undef COLLAGE_TE_VISIT_DECL
};

class IRMutator : public ExprMutator {
 public:
  using ExprMutator::mutate;
  virtual Stmt mutate(const Stmt& s);

 protected:
#define COLLAGE_TE_MUTATE_DECL(kind, node) virtual Stmt mutate_##kind(const node& n, const Stmt& s);
  COLLAGE_TE_STMT_NODES(COLLAGE_TE_MUTATE_DECL)
#undef COLLAGE_TE_MUTATE_DECL
};

// ---------------------------------------------------------------------------------------------
// Utilities.

using VarMap = std::map<const VarNode*, Expr>;
// Replaces variables (by identity) with expressions.
Expr substitute(const Expr& e, const VarMap& vars);
Stmt substitute(const Stmt& s, const VarMap& vars);
// True when `e` mentions variable `v`.
bool uses_var(const Expr& e, const VarNode* v);

// Arithmetic simplification: constant folding, canonical linear forms for integer expressions
// (sum of coefficient * term + constant), min/max and comparisons decided by interval bounds,
// floordiv/floormod of split and fused indices. `ranges` gives known variable ranges.
using VarRanges = std::map<const VarNode*, Range>;
Expr simplify(const Expr& e, const VarRanges& ranges = {});
// Simplifies a statement tree using the ranges of the enclosing loops: removes conditions that
// always hold (or never do), loops of extent 0 and 1, and lets of constants.
Stmt simplify(const Stmt& s);

// Readable C-like text; variables with clashing names are told apart with a suffix.
std::string to_string(const Stmt& s);
std::string to_string(const PrimFunc& f);

// Checks a function: every variable used is bound (loop, let) in scope, every buffer used is a
// parameter or allocated around the use, index counts match buffer ranks, indices are integers,
// conditions are bool, stored values have the buffer's type, vectorized/unrolled loops have
// constant extents, and no TE-only node (ProducerLoad, Reduce) remains.
absl::Status verify(const PrimFunc& f);

}  // namespace collage::te
