// The default injective/reduction schedule of a fused group.
#include "te_ops/default_schedule.h"

#include <algorithm>

#include "collage/loop_ir.h"

namespace collage::te_ops {
namespace {

// Below this many output elements a kernel runs as one task: splitting costs more than it saves.
constexpr int64_t kMinParallelElements = 4096;

bool contains(const std::vector<te::Tensor>& ts, const te::Tensor& t) {
  return std::any_of(ts.begin(), ts.end(), [&](const te::Tensor& o) { return o.same_as(t); });
}

int64_t numel(const te::Tensor& t) {
  int64_t n = 1;
  for (int64_t d : t.shape()) n *= d;
  return n;
}

// True when every read in `body` is contiguous along `v`: the last index is v plus terms free of
// v, or free of v altogether. Gathers (strided, clamped or computed indices) are not worth
// vectorizing a reduction for.
bool reads_contiguously(const te::Expr& body, const te::Var& v) {
  struct Reads : te::ExprVisitor {
    const te::Var* v = nullptr;
    bool ok = true;
    void visit_ProducerLoad(const te::ProducerLoadNode& n, const te::Expr& e) override {
      if (!n.indices.empty()) {
        const te::Expr& last = n.indices.back();
        if (te::uses_var(last, v->get()) &&
            te::uses_var(te::simplify(last - te::Expr(*v)), v->get()))
          ok = false;
        for (size_t k = 0; k + 1 < n.indices.size(); ++k)
          if (te::uses_var(n.indices[k], v->get())) ok = false;
      }
      te::ExprVisitor::visit_ProducerLoad(n, e);
    }
  } reads;
  reads.v = &v;
  reads.visit(body);
  return reads.ok;
}

// A reduction whose innermost data axis is long enough accumulates a vector of it at a time: that
// axis is split by the vector width, the reduction loops go between the two parts and the inner
// part is vectorized (the accumulator is a vector). Returns the outer part of the split, or an
// undefined axis when the stage is left alone.
te::IterVar vectorize_reduction(te::Stage stage, const te::Tensor& t, int lanes) {
  const int rank = t.ndim();
  if (rank == 0 || t.shape()[rank - 1] < lanes || t->reduce_axis.empty()) return {};
  if (!reads_contiguously(t->body, t.axis(rank - 1).var())) return {};
  auto [io, ii] = stage.split(t.axis(rank - 1), lanes);
  std::vector<te::IterVar> order = {io};
  for (size_t r = 0; r < t->reduce_axis.size(); ++r) order.push_back(t.reduce_axis(static_cast<int>(r)));
  order.push_back(ii);
  stage.reorder(order);
  stage.vectorize(ii);
  return io;
}

// The stages that read each reduction of `stages` once the non-reductions are inlined: a stage
// reads the reductions it loads directly or through inlined stages. `kept` are the stages that
// are not inlined (the outputs and the reductions).
std::vector<std::vector<te::Tensor>> readers_of(const std::vector<te::Tensor>& reductions,
                                                const std::vector<te::Tensor>& kept) {
  std::vector<std::vector<te::Tensor>> readers(reductions.size());
  for (const te::Tensor& reader : kept) {
    std::vector<te::Tensor> seen, stack = te::input_tensors(reader);
    while (!stack.empty()) {
      te::Tensor t = stack.back();
      stack.pop_back();
      if (contains(seen, t)) continue;
      seen.push_back(t);
      for (size_t r = 0; r < reductions.size(); ++r)
        if (reductions[r].same_as(t) && !contains(readers[r], reader)) readers[r].push_back(reader);
      if (t.op_kind() == te::OpKind::compute && !contains(kept, t))
        for (const te::Tensor& in : te::input_tensors(t)) stack.push_back(in);
    }
  }
  return readers;
}

}  // namespace

bool is_reduction(const te::Tensor& t) {
  return t.defined() && t.op_kind() == te::OpKind::compute &&
         (!t->reduce_axis.empty() || t->body.as<te::ReduceNode>() != nullptr);
}

te::Schedule default_schedule(const std::vector<te::Tensor>& outputs,
                              const DefaultScheduleOptions& options) {
  te::Schedule s = te::create_schedule(outputs);
  if (options.level == ScheduleLevel::plain) return s;
  // An output that is a reduction accumulates in a local buffer (registers), copied out after.
  const bool cached = options.level == ScheduleLevel::full && outputs.size() == 1 &&
                      is_reduction(outputs[0]) && outputs[0].ndim() > 0;
  if (cached) s.cache_write(outputs[0]);
  std::vector<te::Tensor> reductions;
  for (const te::Tensor& t : s.stage_tensors()) {
    if (t.op_kind() != te::OpKind::compute || contains(outputs, t)) continue;
    if (is_reduction(t))
      reductions.push_back(t);
    else
      s[t].compute_inline();
  }
  if (options.level == ScheduleLevel::serial || outputs.size() != 1) return s;

  const te::Tensor& out = outputs[0];
  te::Stage main = s[out];
  const int rank = out.ndim();
  if (rank == 0) return s;
  // The innermost axis: vectorized when it is long enough.
  te::IterVar inner = out.axis(rank - 1);
  const int lanes = std::max(1, options.target.vector_bytes() / 4);
  std::vector<te::IterVar> outer;
  for (int k = 0; k + 1 < rank; ++k) outer.push_back(out.axis(k));
  if (is_reduction(out) && !cached) {
    te::IterVar io = vectorize_reduction(main, out, lanes);
    if (outer.empty() && io.defined()) outer.push_back(io);
  } else {
    // Without reductions, short innermost axes (14 x 14 feature maps) are fused until the inner
    // loop is a few vectors long.
    int first = rank - 1;
    int64_t extent = out.shape()[rank - 1];
    while (reductions.empty() && first > 0 && extent < 4 * lanes) extent *= out.shape()[--first];
    for (int k = first; k + 1 < rank; ++k) inner = main.fuse(k == first ? out.axis(k) : inner, out.axis(k + 1));
    outer.resize(first);
    if (extent >= lanes) {
      auto [io, ii] = main.split(inner, lanes);
      main.vectorize(ii);
      if (outer.empty()) outer.push_back(io);
    } else if (outer.empty()) {
      outer.push_back(inner);
    }
  }
  if (outer.empty()) return s;
  te::IterVar fused = outer[0];
  for (size_t k = 1; k < outer.size(); ++k) fused = main.fuse(fused, outer[k]);
  // A stage computed at a loop may feed only one stage: a reduction read by several stages, or
  // by one left at the root, is computed at the root (producers first, so decide from the last).
  std::vector<te::Tensor> kept = reductions;
  kept.push_back(out);
  const auto readers = readers_of(reductions, kept);
  std::vector<bool> at_loop(reductions.size(), false);
  for (size_t r = reductions.size(); r-- > 0;) {
    if (readers[r].size() != 1) continue;
    const te::Tensor& reader = readers[r][0];
    bool ok = reader.same_as(out);
    for (size_t q = r + 1; q < reductions.size() && !ok; ++q)
      ok = reductions[q].same_as(reader) && at_loop[q];
    at_loop[r] = ok;
  }
  for (size_t r = 0; r < reductions.size(); ++r) {
    vectorize_reduction(s[reductions[r]], reductions[r], lanes);
    if (at_loop[r]) s[reductions[r]].compute_at(main, fused);
  }
  if (options.num_threads > 1 && numel(out) >= kMinParallelElements) main.parallel(fused);
  return s;
}

}  // namespace collage::te_ops
