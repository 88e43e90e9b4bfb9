// Kernel analysis for the CUDA printer: binding checks, launch dimensions, shared-memory
// inference and read-write parameters.
#include "codegen/cuda/kernel_analysis.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/str_cat.h"

namespace collage::codegen::cuda::detail {

namespace {

constexpr int64_t kMaxThreadsPerBlock = 1024;
constexpr int64_t kMaxStaticShared = 48 * 1024;
constexpr std::array<int64_t, 3> kMaxBlock = {1024, 1024, 64};
constexpr std::array<int64_t, 3> kMaxGrid = {2147483647, 65535, 65535};

class VarUse : public te::IRVisitor {
 public:
  explicit VarUse(const te::VarNode* v) : v_(v) {}
  bool found = false;

 protected:
  void visit_Var(const te::VarNode& n, const te::Expr& e) override { found |= &n == v_; }

 private:
  const te::VarNode* v_;
};

// Loads and stores of every buffer.
class Accesses : public te::IRVisitor {
 public:
  std::set<const te::BufferNode*> loaded, stored;

 protected:
  void visit_Load(const te::LoadNode& n, const te::Expr& e) override {
    loaded.insert(n.buffer.get());
    te::IRVisitor::visit_Load(n, e);
  }
  void visit_Store(const te::StoreNode& n, const te::Stmt& s) override {
    stored.insert(n.buffer.get());
    te::IRVisitor::visit_Store(n, s);
  }
};

// True when a store to `buffer` sits under a threadIdx loop opened inside `s`.
class CooperativeStore : public te::IRVisitor {
 public:
  explicit CooperativeStore(const te::BufferNode* b) : buffer_(b) {}
  bool found = false;

 protected:
  void visit_For(const te::ForNode& n, const te::Stmt& s) override {
    bool thread = n.for_kind == te::ForKind::thread_bound && !parse_thread_tag(n.thread_tag).block;
    depth_ += thread;
    te::IRVisitor::visit_For(n, s);
    depth_ -= thread;
  }
  void visit_Store(const te::StoreNode& n, const te::Stmt& s) override {
    found |= depth_ > 0 && n.buffer.get() == buffer_;
    te::IRVisitor::visit_Store(n, s);
  }

 private:
  const te::BufferNode* buffer_;
  int depth_ = 0;
};

// True when a store to `buffer` uses `var` in its indices or value.
class StoreUses : public te::IRVisitor {
 public:
  StoreUses(const te::BufferNode* b, const te::VarNode* v) : buffer_(b), var_(v) {}
  bool found = false;

 protected:
  void visit_Store(const te::StoreNode& n, const te::Stmt& s) override {
    if (n.buffer.get() == buffer_) {
      for (const te::Expr& i : n.indices) found |= te::uses_var(i, var_);
      found |= te::uses_var(n.value, var_);
    }
    te::IRVisitor::visit_Store(n, s);
  }

 private:
  const te::BufferNode* buffer_;
  const te::VarNode* var_;
};

class Checker : public te::IRVisitor {
 public:
  explicit Checker(const te::PrimFunc& f) : f_(f) {}
  absl::Status status;
  KernelInfo info;
  bool any_bound = false;

 protected:
  void visit_For(const te::ForNode& n, const te::Stmt& s) override {
    if (!status.ok()) return;
    if (n.for_kind == te::ForKind::parallel) {
      return fail(str_cat("parallel loop '", n.var.name(),
                          "' is not bound to a GPU index: bind it to blockIdx/threadIdx instead "
                          "of marking it parallel"));
    }
    if (n.for_kind != te::ForKind::thread_bound) {
      enclosing_.push_back(&n);
      te::IRVisitor::visit_For(n, s);
      enclosing_.pop_back();
      return;
    }
    any_bound = true;
    const ThreadTag tag = parse_thread_tag(n.thread_tag);
    static const std::set<std::string> kTags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                                "threadIdx.x", "threadIdx.y", "threadIdx.z"};
    if (!kTags.count(n.thread_tag)) {
      return fail(str_cat("loop '", n.var.name(), "' is bound to unknown index '", n.thread_tag,
                          "' (expected blockIdx.x/y/z or threadIdx.x/y/z)"));
    }
    std::optional<int64_t> mn = te::as_const_int(n.min), ext = te::as_const_int(n.extent);
    if (!mn || *mn != 0 || !ext || *ext < 1) {
      return fail(str_cat("loop '", n.var.name(), "' bound to ", n.thread_tag,
                          " needs minimum 0 and a constant extent >= 1 (has [",
                          te::to_string(n.min), ", +", te::to_string(n.extent), "))"));
    }
    if (tag.block) {
      for (const te::ForNode* e : enclosing_) {
        const bool block_loop =
            e->for_kind == te::ForKind::thread_bound && parse_thread_tag(e->thread_tag).block;
        if (!block_loop || e->thread_tag == n.thread_tag) {
          return fail(str_cat("loop '", n.var.name(), "' bound to ", n.thread_tag,
                              " is nested in loop '", e->var.name(), "'",
                              e->for_kind == te::ForKind::thread_bound
                                  ? str_cat(" bound to ", e->thread_tag)
                                  : std::string(" (not block-bound)"),
                              ": block indices must be the outermost loops, one per tag"));
        }
      }
    } else {
      for (const te::ForNode* e : enclosing_) {
        if (e->for_kind == te::ForKind::thread_bound && e->thread_tag == n.thread_tag &&
            stmt_uses_var(n.body, e->var.get())) {
          return fail(str_cat("loop '", n.var.name(), "' rebinds ", n.thread_tag, " inside loop '",
                              e->var.name(), "' bound to the same index, but its body uses '",
                              e->var.name(),
                              "' (mismatched bindings: the two loops are one hardware index)"));
        }
      }
    }
    int64_t& dim = tag.block ? info.launch.grid[tag.dim] : info.launch.block[tag.dim];
    dim = std::max(dim, *ext);
    enclosing_.push_back(&n);
    te::IRVisitor::visit_For(n, s);
    enclosing_.pop_back();
  }

  void visit_Allocate(const te::AllocateNode& n, const te::Stmt& s) override {
    if (!status.ok()) return;
    CooperativeStore c(n.buffer.get());
    c.visit(n.body);
    if (c.found) {
      int64_t elems = 1;
      for (int64_t d : n.buffer.shape()) elems *= d;
      const int64_t bytes = elems * static_cast<int64_t>(dtype_size(n.buffer.dtype()));
      info.launch.static_shared_bytes += (bytes + 15) / 16 * 16;
      info.shared.insert(n.buffer.get());
      // The threads that share the buffer must write the same tile: what they store may not
      // depend on a thread index bound outside the allocation.
      for (const te::ForNode* e : enclosing_) {
        if (e->for_kind != te::ForKind::thread_bound || parse_thread_tag(e->thread_tag).block) {
          continue;
        }
        StoreUses u(n.buffer.get(), e->var.get());
        u.visit(n.body);
        if (u.found) {
          return fail(str_cat("shared buffer '", n.buffer.name(), "' is written with '",
                              e->var.name(), "' (", e->thread_tag,
                              ", bound outside the allocation): the threads sharing it would "
                              "write different tiles (bind the stage's own loops to the same "
                              "thread indices as the loops it is computed in)"));
        }
      }
    }
    te::IRVisitor::visit_Allocate(n, s);
  }

 private:
  void fail(const std::string& m) {
    if (status.ok())
      status = absl::InvalidArgumentError(str_cat("cuda kernel '", f_.name, "': ", m));
  }
  const te::PrimFunc& f_;
  std::vector<const te::ForNode*> enclosing_;
};

// Whether i64 index arithmetic fits in 32 bits (see KernelInfo::index32).
class Index32 : public te::IRVisitor {
 public:
  bool fits = true;
  void buffer(const te::Buffer& b) {
    if (b.dtype() == DType::i64) fits = false;
    int64_t n = 1;
    for (int64_t d : b.shape()) {
      n = d > 0 && n > kLimit / d ? kLimit + 1 : n * d;
    }
    fits &= n <= kLimit;
  }

 protected:
  static constexpr int64_t kLimit = int64_t{1} << 30;
  void visit_IntImm(const te::IntImmNode& n, const te::Expr& e) override {
    fits &= n.dtype != DType::i64 || (n.value > -kLimit && n.value < kLimit);
  }
  void visit_Cast(const te::CastNode& n, const te::Expr& e) override {
    fits &= n.dtype != DType::i64 || !is_float(n.value.dtype());
    te::IRVisitor::visit_Cast(n, e);
  }
  void visit_For(const te::ForNode& n, const te::Stmt& s) override {
    std::optional<int64_t> ext = te::as_const_int(n.extent);
    fits &= ext && *ext < kLimit;
    te::IRVisitor::visit_For(n, s);
  }
  void visit_Allocate(const te::AllocateNode& n, const te::Stmt& s) override {
    buffer(n.buffer);
    te::IRVisitor::visit_Allocate(n, s);
  }
};

}  // namespace

ThreadTag parse_thread_tag(const std::string& tag) {
  ThreadTag t;
  t.block = tag.rfind("blockIdx.", 0) == 0;
  const char last = tag.empty() ? 'x' : tag.back();
  t.dim = last == 'y' ? 1 : last == 'z' ? 2 : 0;
  return t;
}

bool stmt_uses_var(const te::Stmt& s, const te::VarNode* v) {
  VarUse u(v);
  u.visit(s);
  return u.found;
}

absl::StatusOr<KernelInfo> analyse_kernel(const te::PrimFunc& f) {
  if (absl::Status s = te::verify(f); !s.ok()) {
    return absl::InvalidArgumentError(str_cat("cuda kernel '", f.name, "': ", s.message()));
  }
  Checker c(f);
  c.visit(f.body);
  if (!c.status.ok()) return c.status;
  auto err = [&](const std::string& m) {
    return absl::InvalidArgumentError(str_cat("cuda kernel '", f.name, "': ", m));
  };
  if (!c.any_bound) {
    return err(
        "no loop is bound to blockIdx/threadIdx (a GPU kernel needs its iterations "
        "spread over blocks and threads: bind its outer loops)");
  }
  const LaunchConfig& l = c.info.launch;
  static constexpr const char* kDims = "xyz";
  for (int d = 0; d < 3; ++d) {
    if (l.block[d] > kMaxBlock[d]) {
      return err(
          str_cat("threadIdx.", kDims[d], " extent ", l.block[d], " exceeds ", kMaxBlock[d]));
    }
    if (l.grid[d] > kMaxGrid[d]) {
      return err(str_cat("blockIdx.", kDims[d], " extent ", l.grid[d], " exceeds ", kMaxGrid[d]));
    }
  }
  if (l.threads_per_block() > kMaxThreadsPerBlock) {
    return err(str_cat(l.threads_per_block(), " threads per block (", l.block[0], "x", l.block[1],
                       "x", l.block[2], ") exceed ", kMaxThreadsPerBlock));
  }
  if (l.static_shared_bytes > kMaxStaticShared) {
    return err(str_cat(l.static_shared_bytes, " bytes of shared memory exceed the ",
                       kMaxStaticShared, " a kernel may declare statically"));
  }
  Index32 idx;
  for (const te::Buffer& p : f.params) idx.buffer(p);
  idx.visit(f.body);
  c.info.index32 = idx.fits;
  Accesses a;
  a.visit(f.body);
  for (const te::Buffer& p : f.params) {
    if (a.loaded.count(p.get()) && a.stored.count(p.get())) c.info.read_write.insert(p.get());
  }
  return c.info;
}

}  // namespace collage::codegen::cuda::detail
