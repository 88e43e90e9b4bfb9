// Loop patterns the CUDA printer emits specially: serial reductions of up to 32 iterations as warp
// shuffles, and contiguous aligned vectorized f32 stores as float2/float4 accesses.
#include <map>

#include "codegen/cuda/printer.h"
#include "core/str_cat.h"
#include "te/arith.h"

namespace collage::codegen::cuda::detail {

namespace {

constexpr int64_t kWarpSize = 32;

bool same_indices(const std::vector<te::Expr>& a, const std::vector<te::Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!te::structural_equal(a[i], b[i])) return false;
  }
  return true;
}

bool loads_buffer(const te::Expr& e, const te::BufferNode* b) {
  struct Finder : te::ExprVisitor {
    const te::BufferNode* b;
    bool found = false;
    void visit_Load(const te::LoadNode& n, const te::Expr& e) override {
      found |= n.buffer.get() == b;
      te::ExprVisitor::visit_Load(n, e);
    }
  } f;
  f.b = b;
  f.visit(e);
  return f.found;
}

// Whether `flat` is v + (multiple of lanes) for every value of the other variables.
bool contiguous_aligned(const te::Expr& flat, const te::VarNode* v, int64_t lanes) {
  te::arith::LinearForm lf = te::arith::linearize(flat);
  if (lf.constant % lanes != 0) return false;
  bool has_v = false;
  for (const te::arith::LinearTerm& t : lf.terms) {
    if (const auto* tv = t.atom.as<te::VarNode>(); tv == v) {
      has_v = t.coeff == 1;
      if (!has_v) return false;
    } else if (te::uses_var(t.atom, v) || t.coeff % lanes != 0) {
      return false;
    }
  }
  return has_v;
}

// Replaces chosen loads by per-lane variables.
class LaneLoads : public te::ExprMutator {
 public:
  std::map<const te::LoadNode*, te::Var> lane_value;

 protected:
  te::Expr mutate_Load(const te::LoadNode& n, const te::Expr& e) override {
    auto it = lane_value.find(&n);
    return it != lane_value.end() ? it->second : te::ExprMutator::mutate_Load(n, e);
  }
};

}  // namespace

bool Printer::try_warp_reduce(const te::ForNode& n) {
  const auto* st = n.body.as<te::StoreNode>();
  std::optional<int64_t> ext = te::as_const_int(n.extent), mn = te::as_const_int(n.min);
  if (!st || !ext || !mn || *ext < 2 || *ext > kWarpSize || divergent_ > 0 ||
      info_.launch.block[0] % kWarpSize != 0 || open_tags_.count("threadIdx.x")) {
    return false;
  }
  const DType t = st->buffer.dtype();
  if (t != DType::f32 && t != DType::i32 && t != DType::i64) return false;
  const auto* b = st->value.as<te::BinaryNode>();
  if (!b || (b->kind != te::ExprKind::Add && b->kind != te::ExprKind::Max &&
             b->kind != te::ExprKind::Min)) {
    return false;
  }
  auto is_acc = [&](const te::Expr& e) {
    const auto* l = e.as<te::LoadNode>();
    return l && l->buffer.same_as(st->buffer) && same_indices(l->indices, st->indices);
  };
  const te::Expr part = is_acc(b->a) ? b->b : is_acc(b->b) ? b->a : te::Expr();
  if (!part.defined() || !te::uses_var(part, n.var.get()) || loads_buffer(part, st->buffer.get())) {
    return false;
  }
  for (const te::Expr& i : st->indices) {
    if (te::uses_var(i, n.var.get())) return false;
  }
  const te::ReduceOp op = b->kind == te::ExprKind::Add   ? te::ReduceOp::sum
                          : b->kind == te::ExprKind::Max ? te::ReduceOp::max
                                                         : te::ReduceOp::min;
  const std::string v = var(n.var.get());
  te::Var acc(n.var.name() + "_part", t);
  const std::string a = var(acc.get());
  const std::string type = scalar_type(t);
  open("");
  line(str_cat("// loop '", n.var.name(), "' (", *ext, " iterations) as a warp reduction"));
  line(str_cat("const ", scalar_type(DType::i64), " ", v, " = (", scalar_type(DType::i64),
               ")(threadIdx.x & 31u)", *mn ? str_cat(" + ", *mn) : std::string(), ";"));
  line(str_cat(type, " ", a, " = ", expr(te::reduce_identity(op, t)), ";"));
  thread_vars_.insert(n.var.get());
  ranges_[n.var.get()] = te::Range{*mn, kWarpSize};
  line(str_cat("if (", v, " < ", *mn + *ext, ") ", a, " = ", expr(part), ";"));
  ranges_.erase(n.var.get());
  const std::string shfl = str_cat("__shfl_xor_sync(0xffffffffu, ", a, ", off)");
  const std::string combined =
      op == te::ReduceOp::sum ? str_cat(a, " + ", shfl)
      : is_float(t)
          ? str_cat(op == te::ReduceOp::max ? "collage_fmax(" : "collage_fmin(", a, ", ", shfl, ")")
          : str_cat(op == te::ReduceOp::max ? "collage_max<" : "collage_min<", type, ">(", a, ", ",
                    shfl, ")");
  line(str_cat("for (int off = 16; off > 0; off >>= 1) ", a, " = ", combined, ";"));
  store(*te::make_store(st->buffer, st->indices,
                        te::make_binary(b->kind, te::load(st->buffer, st->indices), acc))
             .as<te::StoreNode>());
  close();
  return true;
}

bool Printer::try_vector_store(const te::ForNode& n) {
  const auto* st = n.body.as<te::StoreNode>();
  std::optional<int64_t> ext = te::as_const_int(n.extent), mn = te::as_const_int(n.min);
  if (!st || !ext || !mn || (*ext != 2 && *ext != 4) || *mn % *ext != 0 ||
      st->buffer.dtype() != DType::f32) {
    return false;
  }
  const int64_t lanes = *ext;
  const te::VarNode* v = n.var.get();
  const te::Expr store_flat = flat_index(st->buffer, st->indices);
  if (!contiguous_aligned(store_flat, v, lanes)) return false;

  struct Loads : te::ExprVisitor {
    std::vector<const te::LoadNode*> all;
    void visit_Load(const te::LoadNode& n, const te::Expr& e) override {
      all.push_back(&n);
      te::ExprVisitor::visit_Load(n, e);
    }
  } loads;
  loads.visit(st->value);

  static constexpr const char* kLane = "xyzw";
  const std::string vec = lanes == 4 ? "float4" : "float2";
  const std::string loop = var(v);
  te::VarMap at_min{{v, te::make_int(DType::i64, *mn)}};
  open("");
  line(
      str_cat("// vectorized loop '", n.var.name(), "' (", lanes, " lanes) as ", vec, " accesses"));
  // One vector per distinct (buffer, address): loads of the same element share it.
  struct VectorLoad {
    const te::BufferNode* buffer;
    te::Expr flat;
    std::vector<te::Var> lanes;
  };
  std::vector<VectorLoad> vectors;
  std::map<const te::LoadNode*, size_t> vector_of;
  for (const te::LoadNode* l : loads.all) {
    if (l->buffer.dtype() != DType::f32) continue;
    const te::Expr flat = flat_index(l->buffer, l->indices);
    if (!contiguous_aligned(flat, v, lanes)) continue;
    size_t j = 0;
    while (j < vectors.size() &&
           !(vectors[j].buffer == l->buffer.get() && te::structural_equal(vectors[j].flat, flat))) {
      ++j;
    }
    vector_of[l] = j;
    if (j < vectors.size()) continue;
    const std::string name = name_of(l, str_cat(loop, "_", l->buffer.name()));
    line(str_cat("const ", vec, " ", name, " = *reinterpret_cast<const ", vec, "*>(&",
                 buf(l->buffer.get()), "[", expr(te::simplify(te::substitute(flat, at_min))),
                 "]);"));
    VectorLoad vl{l->buffer.get(), flat, {}};
    for (int64_t k = 0; k < lanes; ++k) {
      te::Var lv(str_cat(name, ".", kLane[k]), DType::f32);
      names_[lv.get()] = str_cat(name, ".", kLane[k]);
      vl.lanes.push_back(lv);
    }
    vectors.push_back(std::move(vl));
  }
  const std::string out = name_of(&n, loop + "_out");
  line(str_cat(vec, " ", out, ";"));
  LaneLoads lane_loads;
  for (int64_t k = 0; k < lanes; ++k) {
    lane_loads.lane_value.clear();
    for (const auto& [load, j] : vector_of) lane_loads.lane_value[load] = vectors[j].lanes[k];
    te::Expr value = lane_loads.mutate(st->value);
    value = te::simplify(te::substitute(value, {{v, te::make_int(DType::i64, *mn + k)}}));
    line(str_cat(out, ".", kLane[k], " = ", expr(value), ";"));
  }
  const std::string only = single_thread_guard(st->buffer.get());
  line(str_cat(only.empty() ? "" : str_cat("if (", only, ") "), "*reinterpret_cast<", vec, "*>(&",
               buf(st->buffer.get()), "[", expr(te::simplify(te::substitute(store_flat, at_min))),
               "]) = ", out, ";"));
  close();
  return true;
}

}  // namespace collage::codegen::cuda::detail
