// The CUDA C printer's state: names, the thread context of the statement being printed, and the
// expression and statement emitters (cuda_expr.cpp, cuda_stmt.cpp).
#pragma once

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "codegen/cuda/kernel_analysis.h"

namespace collage::codegen::cuda::detail {

class Printer {
 public:
  Printer(const te::PrimFunc& f, const KernelInfo& info) : f_(f), info_(info) {}

  // The whole translation unit, or the first error met while printing.
  absl::StatusOr<std::string> print_kernel();

  // Expressions (cuda_expr.cpp). Values of f16/bf16 type are carried as float.
  std::string expr(const te::Expr& e);
  // The C type of a value of type t: float for floating point (f16/bf16 travel as float), the
  // index type for i64 (int when the kernel's index arithmetic fits in 32 bits).
  std::string scalar_type(DType t) const;
  // The flat row-major element index of buffer[indices].
  te::Expr flat_index(const te::Buffer& b, const std::vector<te::Expr>& indices) const;

 private:
  // Names: C identifiers, unique in the kernel; `fixed` ones are printed verbatim.
  std::string name_of(const void* key, const std::string& hint);
  std::string var(const te::VarNode* v) { return name_of(v, v->name); }
  std::string buf(const te::BufferNode* b) { return name_of(b, b->name); }
  std::string binary(const te::BinaryNode& n);
  std::string call(const te::CallNode& n);
  std::string cast(DType to, const te::Expr& v);
  std::string literal(const te::Expr& e);

  // Statements (cuda_stmt.cpp).
  void stmt(const te::Stmt& s);
  void seq(const te::SeqNode& n);
  void for_loop(const te::ForNode& n);
  void bound_loop(const te::ForNode& n);
  bool try_warp_reduce(const te::ForNode& n);
  bool try_vector_store(const te::ForNode& n);
  void store(const te::StoreNode& n);
  // "threadIdx.y == 0 && ..." for the block dimensions no enclosing loop is bound to, when a
  // store to `b` would otherwise be repeated by those threads; empty when none.
  std::string single_thread_guard(const te::BufferNode* b) const;
  void allocate(const te::AllocateNode& n);
  void barrier();
  void line(const std::string& text);
  // A line that executes nothing (braces, declarations): a barrier just printed stays the last.
  void text(const std::string& text);
  void open(const std::string& text);
  void close();
  void fail(const std::string& message);
  // Whether the buffer is visible to other threads (shared, or a parameter).
  bool block_visible(const te::BufferNode* b) const;
  // Whether `s` stores to shared memory or a read-write parameter outside any nested Seq.
  bool writes_block_memory(const te::Stmt& s) const;
  bool thread_dependent(const te::Expr& e) const;

  const te::PrimFunc& f_;
  const KernelInfo& info_;
  std::ostringstream os_;
  int indent_ = 1;
  bool last_was_barrier_ = false;
  std::vector<bool> control_;  // per open brace: a loop or branch (not a plain block)
  absl::Status status_;
  std::map<const void*, std::string> names_;
  std::set<std::string> used_names_;
  // Thread context of the current statement.
  std::map<std::string, const te::VarNode*> open_tags_;  // tag -> innermost loop bound to it
  std::set<const te::VarNode*> thread_vars_;             // vars whose value differs by thread
  int divergent_ = 0;     // > 0 under a condition that depends on the thread index
  te::VarRanges ranges_;  // ranges of the enclosing loops (for C division of non-negatives)
};

}  // namespace collage::codegen::cuda::detail
