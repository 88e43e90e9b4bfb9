// dnnl kernel instances: argument and constant validation, buffer binding and reorders, post-ops,
// and the thread-safe run over per-call scratch slots.
#include "dnnl_kernel.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace collage::rt_dnnl {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw ParamError(what);
}

constexpr size_t kAlign = 64;

size_t align_up(size_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

std::shared_ptr<void> aligned_buffer(size_t bytes) {
  void* p = std::aligned_alloc(kAlign, align_up(bytes == 0 ? 1 : bytes));
  if (!p) throw std::bad_alloc();
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

// Byte size of a tensor descriptor; ParamError on a malformed one.
size_t desc_bytes(const collage_tensor_desc_t& d, const char* what, int32_t i) {
  const std::string name = std::string(what) + " " + std::to_string(i);
  require(d.rank >= 0 && d.rank <= 32, name + " has rank " + std::to_string(d.rank));
  require(d.rank == 0 || d.shape, name + " has no shape");
  unsigned __int128 n = dtype_bytes(d.dtype);
  for (int32_t k = 0; k < d.rank; ++k) {
    require(d.shape[k] >= 0, name + " has a negative extent");
    n *= static_cast<uint64_t>(d.shape[k]);
    require(n < (static_cast<unsigned __int128>(1) << 62), name + " is too large");
  }
  return static_cast<size_t>(n);
}

bool is_plain(const Layout& l) {
  const Layout p = plain_layout(l.dims);
  return l.padded_dims == p.padded_dims && l.strides == p.strides && l.inner_blks.empty();
}

}  // namespace

// One set of per-call state: the scratch block, a stream, and memory objects for every step
// argument (scratch and constant ones bound once, argument ones re-bound on every run).
struct DnnlKernel::Slot {
  std::atomic<bool> busy{false};
  bool ready = false;  // touched only by the thread holding `busy`
  std::shared_ptr<void> scratch;
  dnnl::stream stream;
  std::vector<StepMemory> args;  // per step
  struct Rebind {
    dnnl::memory memory;
    int32_t arg;
    size_t offset;
  };
  std::vector<std::vector<Rebind>> rebind;  // per step
  std::vector<std::vector<StepMemory>> lane_args;  // per step, per lane (side-by-side steps)
  std::vector<dnnl::stream> lane_streams;          // one per lane
};

OmpThreadScope::OmpThreadScope(int32_t threads) : before_(omp_get_max_threads()) {
  set_ = threads > 0 && threads != before_;
  if (set_) omp_set_num_threads(threads);
}

OmpThreadScope::~OmpThreadScope() {
  if (set_) omp_set_num_threads(before_);
}

DnnlKernel::DnnlKernel(const collage_kernel_desc_t& desc, int32_t max_threads)
    : engine_(dnnl::engine::kind::cpu, 0), slots_(new Slot[kSlots]) {
  require(desc.struct_size >= COLLAGE_KERNEL_DESC_V1_BASE_SIZE, "kernel descriptor too old");
  require(desc.entry != nullptr, "kernel has no entry name");
  require(desc.params != nullptr || desc.params_size == 0, "kernel params missing");
  require(desc.num_args >= 0 && desc.num_args <= 65536 && (desc.num_args == 0 || desc.args),
          "bad argument count");
  require(desc.num_inputs >= 0 && desc.num_inputs <= desc.num_args, "bad input count");
  require(desc.num_constants >= 0 && desc.num_constants <= static_cast<int32_t>(kMaxConstants) &&
              (desc.num_constants == 0 || (desc.constant_descs && desc.constants)),
          "bad constant count");
  num_args_ = desc.num_args;
  num_inputs_ = desc.num_inputs;
  for (int32_t i = 0; i < desc.num_args; ++i) {
    arg_bytes_.push_back(desc_bytes(desc.args[i], "argument", i));
    arg_dtypes_.push_back(desc.args[i].dtype);
  }
  for (int32_t i = 0; i < desc.num_constants; ++i) {
    const_bytes_.push_back(desc_bytes(desc.constant_descs[i], "constant", i));
    const_dtypes_.push_back(desc.constant_descs[i].dtype);
    require(desc.constants[i] != nullptr || const_bytes_.back() == 0,
            "constant " + std::to_string(i) + " has no data");
    constants_.push_back(desc.constants[i]);
  }

  ParamReader r(desc.params, desc.params_size);
  Header h;
  h.io(r);
  check_reader(r);
  require(h.magic == kParamsMagic, "params do not start with the dnnl magic number");
  require(h.version >= kOldestParamsVersion && h.version <= kParamsVersion,
          "params version " + std::to_string(h.version) + " (this module reads versions " +
              std::to_string(kOldestParamsVersion) + " to " + std::to_string(kParamsVersion) +
              ")");
  r.set_version(h.version);
  const char* kind_name = op_kind_name(h.kind);
  require(kind_name != nullptr,
          "unknown operation kind " + std::to_string(static_cast<uint32_t>(h.kind)));
  require(std::strcmp(kind_name, desc.entry) == 0,
          std::string("entry '") + desc.entry + "' does not match params of kind " + kind_name);
  require(h.constant_layouts.size() == static_cast<size_t>(desc.num_constants),
          "params describe " + std::to_string(h.constant_layouts.size()) + " constants, " +
              std::to_string(desc.num_constants) + " given");
  require(h.num_threads >= 0 && h.num_threads <= 4096, "bad thread count");
  num_threads_ = max_threads > 0 ? max_threads : h.num_threads;
  layouts_ = std::move(h.constant_layouts);
  for (int32_t i = 0; i < desc.num_constants; ++i) {
    // Validates every stored layout against its buffer up front.
    const dnnl::memory::desc md = constant_md(i);
    // Binding a padded layout makes oneDNN write zeros into the padding: such constants get a
    // private copy, so that borrowed (possibly read-only) artifact memory is never written.
    if (!is_plain(layouts_[i])) {
      auto copy = aligned_buffer(std::max(layout_bytes(md), const_bytes_[i]));
      std::memcpy(copy.get(), constants_[i], const_bytes_[i]);
      constants_[i] = copy.get();
      owned_.push_back(std::move(copy));
    }
  }

  {
    // oneDNN splits a primitive's work for the threads there are when it creates it, and runs
    // it on that many (an explicit num_threads clause), whatever the caller's setting at run
    // time: so the primitives are created with the count they will run with.
    OmpThreadScope threads(num_threads_);
    created_threads_ = omp_get_max_threads();
    build(r, h.kind);
  }
  require(r.at_end(),
          "params have " + std::to_string(desc.params_size - r.position()) + " trailing bytes");
  // Constant memory objects are made once, here: slots initialised later, maybe while another
  // thread runs, only share them.
  for (const Step& step : steps_)
    for (const StepArg& a : step.args) {
      if (a.buf.kind != BufRef::Kind::constant) continue;
      bool made = false;
      for (const ConstantMemory& c : constant_memory_)
        made = made || (c.buf.index == a.buf.index && c.buf.offset == a.buf.offset && c.md == a.md);
      if (made) continue;
      auto* base = static_cast<uint8_t*>(const_cast<void*>(constants_[a.buf.index]));
      constant_memory_.push_back({a.buf, a.md, dnnl::memory(a.md, engine_, base + a.buf.offset)});
    }
}

const dnnl::memory& DnnlKernel::constant_memory(const BufRef& buf,
                                                const dnnl::memory::desc& md) const {
  for (const ConstantMemory& c : constant_memory_)
    if (c.buf.index == buf.index && c.buf.offset == buf.offset && c.md == md) return c.memory;
  throw ParamError("constant " + std::to_string(buf.index) + " has no memory object");
}

DnnlKernel::~DnnlKernel() = default;

void DnnlKernel::build(ParamReader& r, OpKind kind) {
  switch (kind) {
    case OpKind::conv:
      return build_conv(*this, r, false);
    case OpKind::deconv:
      return build_conv(*this, r, true);
    case OpKind::matmul:
      return build_matmul(*this, r);
    case OpKind::pool:
      return build_pool(*this, r);
    case OpKind::softmax:
      return build_softmax(*this, r);
    case OpKind::layer_norm:
      return build_layer_norm(*this, r);
    case OpKind::eltwise:
      return build_eltwise(*this, r);
    case OpKind::binary:
      return build_binary(*this, r);
    case OpKind::concat:
      return build_concat(*this, r);
    case OpKind::qconv:
      return build_qconv(*this, r);
    case OpKind::qmatmul:
      return build_qmatmul(*this, r);
    case OpKind::rnn:
      return build_rnn(*this, r);
    case OpKind::deform_conv:
      return build_deform_conv(*this, r);
  }
  throw ParamError("unknown operation kind");
}

void check_reader(const ParamReader& r) {
  if (!r.ok()) throw ParamError(r.error());
}

dnnl::memory::desc DnnlKernel::constant_md(int32_t index) const {
  require(index >= 0 && static_cast<size_t>(index) < layouts_.size(),
          "constant index " + std::to_string(index) + " out of range");
  return layout_md(layouts_[index], dnnl_type(const_dtypes_[index]), const_bytes_[index]);
}

dnnl::memory::desc DnnlKernel::operand_md(const Operand& op, int32_t dtype, bool output) const {
  const std::string idx = std::to_string(op.index);
  switch (op.kind) {
    case SourceKind::arg: {
      const int32_t lo = output ? num_inputs_ : 0, hi = output ? num_args_ : num_inputs_;
      require(op.index >= lo && op.index < hi,
              std::string(output ? "output" : "input") + " argument " + idx + " out of range");
      require(arg_dtypes_[op.index] == dtype, "argument " + idx + " has element type " +
                                                  std::to_string(arg_dtypes_[op.index]) +
                                                  ", expected " + std::to_string(dtype));
      require(op.c_block == 0 || op.transposed == 0,
              "argument " + idx + " cannot be both transposed and channel-blocked");
      dnnl::memory::desc md =
          op.c_block != 0 ? blocked_md(op.dims, dnnl_type(dtype), op.c_block)
                          : plain_md(op.dims, dnnl_type(dtype), op.transposed != 0);
      require(md.get_size() <= arg_bytes_[op.index],
              "argument " + idx + " is smaller than its operand dims");
      return md;
    }
    case SourceKind::constant: {
      require(!output, "an output cannot be a constant");
      require(op.transposed == 0 && op.c_block == 0,
              "constant operands are never transposed or channel-blocked");
      require(source_dtype(op) == dtype, "constant " + idx + " has the wrong element type");
      dnnl::memory::desc md = constant_md(op.index);
      require(op.dims == layouts_[op.index].dims,
              "constant " + idx + " dims differ from its layout");
      return md;
    }
    case SourceKind::none:
      break;
  }
  throw ParamError("missing operand");
}

dnnl::memory::desc DnnlKernel::input_md(const Operand& op, int32_t dtype) const {
  return operand_md(op, dtype, false);
}

dnnl::memory::desc DnnlKernel::output_md(const Operand& op, int32_t dtype) const {
  return operand_md(op, dtype, true);
}

dnnl::memory::desc DnnlKernel::any_md(const dnnl::memory::desc& md) {
  return dnnl::memory::desc(md.dims(), md.data_type(), dnnl::memory::format_tag::any);
}

dnnl::memory::desc DnnlKernel::create_md(const Operand& op, const dnnl::memory::desc& md) {
  return op.kind == SourceKind::arg && op.c_block != 0 ? md : any_md(md);
}

BufRef DnnlKernel::scratch(const dnnl::memory::desc& md) {
  BufRef b{BufRef::Kind::scratch, 0, scratch_bytes_};
  scratch_bytes_ += align_up(layout_bytes(md));
  return b;
}

int32_t DnnlKernel::source_dtype(const Operand& op) const {
  const auto in = [&](size_t n) { return op.index >= 0 && static_cast<size_t>(op.index) < n; };
  if (op.kind == SourceKind::constant && in(const_dtypes_.size())) return const_dtypes_[op.index];
  if (op.kind == SourceKind::arg && in(arg_dtypes_.size())) return arg_dtypes_[op.index];
  throw ParamError("operand " + std::to_string(op.index) + " out of range");
}

BufRef DnnlKernel::bind_input(const Operand& op, const dnnl::memory::desc& want) {
  const dnnl::memory::desc have = input_md(op, source_dtype(op));
  const BufRef::Kind kind =
      op.kind == SourceKind::constant ? BufRef::Kind::constant : BufRef::Kind::arg;
  if (op.kind == SourceKind::constant) {
    if (const_bound_.size() < layouts_.size()) const_bound_.resize(layouts_.size());
    if (have != want && const_bound_[op.index])
      throw ParamError("constant " + std::to_string(op.index) + " is used in two layouts");
    const_bound_[op.index] = true;
  }
  if (have == want) return {kind, op.index, 0};
  if (op.kind == SourceKind::arg) {
    BufRef tmp = scratch(want);
    add_reorder({kind, op.index, 0}, have, tmp, want);
    return tmp;
  }
  // A constant in another layout than the primitive's: reorder it once, now.
  auto copy = aligned_buffer(layout_bytes(want));
  dnnl::memory from(have, engine_, const_cast<void*>(constants_[op.index]));
  dnnl::memory to(want, engine_, copy.get());
  dnnl::stream s(engine_);
  dnnl::reorder(from, to).execute(s, from, to);
  s.wait();
  constants_[op.index] = copy.get();
  if (want.data.extra.flags != 0) {
    // Int8 weights with their compensation sums appended (oneDNN's extra data), which a stored
    // layout cannot describe: every kernel creation reorders them, and only this step reads
    // them (a later use in another layout would read the wrong bytes).
    owned_.push_back(std::move(copy));
    const_bytes_[op.index] = 0;
    return {kind, op.index, 0};
  }
  layouts_[op.index] = layout_of(want);
  const_bytes_[op.index] = layout_bytes(want);
  repacked_.push_back({op.index, layouts_[op.index], copy.get(), const_bytes_[op.index]});
  owned_.push_back(std::move(copy));
  return {kind, op.index, 0};
}

OutputBinding DnnlKernel::bind_output(const Operand& op, const dnnl::memory::desc& produced) {
  OutputBinding out;
  out.arg = {BufRef::Kind::arg, op.index, 0};
  out.arg_md = output_md(op, source_dtype(op));
  out.md = produced;
  if (produced == out.arg_md) {
    out.buf = out.arg;
  } else {
    out.buf = scratch(produced);
    out.reorder = true;
  }
  return out;
}

void DnnlKernel::finish_output(const OutputBinding& out) {
  if (out.reorder) add_reorder(out.buf, out.md, out.arg, out.arg_md);
}

void DnnlKernel::add_reorder(BufRef from, const dnnl::memory::desc& from_md, BufRef to,
                             const dnnl::memory::desc& to_md) {
  dnnl::reorder::primitive_desc pd(engine_, from_md, engine_, to_md, attr());
  add_step(pd, dnnl::reorder(pd), {{DNNL_ARG_FROM, from_md, from}, {DNNL_ARG_TO, to_md, to}});
}

dnnl::primitive_attr DnnlKernel::attr(const PostOpPlan* post_ops) const {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (post_ops) a.set_post_ops(post_ops->ops);
  return a;
}

PostOpPlan DnnlKernel::plan_post_ops(const std::vector<PostOp>& ops,
                                     const std::vector<int64_t>& dst_dims, bool allow_sum) const {
  // oneDNN 2.6 gives every eltwise post-op of one algorithm the same parameters: refuse lists
  // where they differ rather than compute them wrongly.
  for (size_t i = 0; i < ops.size(); ++i)
    for (size_t j = i + 1; j < ops.size(); ++j)
      if (ops[i].kind == PostOpKind::eltwise && ops[j].kind == PostOpKind::eltwise &&
          ops[i].eltwise.alg == ops[j].eltwise.alg &&
          (ops[i].eltwise.alpha != ops[j].eltwise.alpha ||
           ops[i].eltwise.beta != ops[j].eltwise.beta))
        throw ParamError("two eltwise post-ops of one algorithm with different parameters");
  PostOpPlan plan;
  for (size_t i = 0; i < ops.size(); ++i) {
    const PostOp& p = ops[i];
    switch (p.kind) {
      case PostOpKind::eltwise:
        plan.ops.append_eltwise(1.f, eltwise_algorithm(p.eltwise.alg), p.eltwise.alpha,
                                p.eltwise.beta);
        break;
      case PostOpKind::sum:
        require(allow_sum && !plan.sum, "a sum post-op is only allowed once");
        require(p.operand.dims == dst_dims, "the sum post-op operand must have dst's dims");
        input_md(p.operand);
        plan.ops.append_sum(1.f);
        plan.sum = &p.operand;
        break;
      case PostOpKind::binary: {
        const dnnl::memory::desc md = input_md(p.operand);
        require(p.operand.dims.size() == dst_dims.size(),
                "a binary post-op operand must have dst's rank");
        for (size_t d = 0; d < dst_dims.size(); ++d)
          require(p.operand.dims[d] == dst_dims[d] || p.operand.dims[d] == 1,
                  "a binary post-op operand must broadcast to dst");
        plan.ops.append_binary(binary_algorithm(p.binary), md);
        plan.binary.emplace_back(static_cast<int>(i), &p.operand);
        break;
      }
      default:
        throw ParamError("unknown post-op kind");
    }
  }
  return plan;
}

void DnnlKernel::bind_post_ops(const PostOpPlan& plan, const OutputBinding& dst,
                               std::vector<StepArg>& args) {
  if (plan.sum) {
    const dnnl::memory::desc md = input_md(*plan.sum);
    add_reorder(bind_input(*plan.sum, md), md, dst.buf, dst.md);
  }
  for (const auto& [index, op] : plan.binary) {
    const dnnl::memory::desc md = input_md(*op);
    args.push_back(
        {DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1, md, bind_input(*op, md)});
  }
}

void DnnlKernel::add_step(const dnnl::primitive_desc_base& pd, dnnl::primitive prim,
                          std::vector<StepArg> args) {
  const dnnl::memory::desc pad = pd.scratchpad_desc();
  if (pad.get_size() > 0) args.push_back({DNNL_ARG_SCRATCHPAD, pad, scratch(pad)});
  impls_.push_back(pd.impl_info_str());
  steps_.push_back({std::move(prim), std::move(args), nullptr, {}});
}

void DnnlKernel::add_host_step(std::string name, std::vector<StepArg> args,
                               std::function<void(const StepMemory&)> fn) {
  impls_.push_back(std::move(name));
  steps_.push_back({dnnl::primitive(), std::move(args), std::move(fn), {}});
}

void DnnlKernel::add_side_by_side_step(const std::vector<dnnl::primitive_desc>& pds,
                                       std::vector<dnnl::primitive> prims,
                                       std::vector<std::vector<StepArg>> args) {
  std::vector<StepArg> all;
  std::string impls;
  for (size_t i = 0; i < prims.size(); ++i) {
    const int lane = static_cast<int>(i);
    const dnnl::memory::desc pad = pds[i].scratchpad_desc();
    if (pad.get_size() > 0) args[i].push_back({DNNL_ARG_SCRATCHPAD, pad, scratch(pad)});
    for (StepArg& a : args[i]) {
      a.dnnl_arg = lane_arg(lane, a.dnnl_arg);
      all.push_back(std::move(a));
    }
    impls += (i ? " | " : "side by side: ") + std::string(pds[i].impl_info_str());
  }
  impls_.push_back(std::move(impls));
  steps_.push_back({dnnl::primitive(), std::move(all), nullptr, std::move(prims)});
}

void DnnlKernel::run_lanes(Slot& slot, size_t s) {
  const std::vector<dnnl::primitive>& lanes = steps_[s].lanes;
  const int n = static_cast<int>(lanes.size());
  // A primitive runs on the calling thread alone inside a parallel region (oneDNN's OpenMP
  // threading does not nest); an error is raised after the region, which it must not leave.
  // Threads claim lanes as they come: on a loaded machine a team thread that does not get a core
  // in time leaves its lane to one that did.
  std::exception_ptr error;
  std::atomic<int> next{0};
#pragma omp parallel num_threads(n)
  {
    for (int lane = next++; lane < n; lane = next++) {
      try {
        lanes[lane].execute(slot.lane_streams[lane], slot.lane_args[s][lane]);
        slot.lane_streams[lane].wait();
      } catch (...) {
#pragma omp critical(collage_dnnl_lanes)
        error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

void DnnlKernel::init_slot(Slot& slot) const {
  slot.scratch = aligned_buffer(scratch_bytes_);
  slot.stream = dnnl::stream(engine_);
  slot.args.assign(steps_.size(), {});
  slot.rebind.assign(steps_.size(), {});
  slot.lane_args.assign(steps_.size(), {});
  size_t lanes = 0;
  for (size_t s = 0; s < steps_.size(); ++s) {
    slot.lane_args[s].resize(steps_[s].lanes.size());
    lanes = std::max(lanes, steps_[s].lanes.size());
  }
  while (slot.lane_streams.size() < lanes) slot.lane_streams.emplace_back(engine_);
  auto* base = static_cast<uint8_t*>(slot.scratch.get());
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (const StepArg& a : steps_[s].args) {
      dnnl::memory m;
      switch (a.buf.kind) {
        case BufRef::Kind::arg:
          m = dnnl::memory(a.md, engine_, DNNL_MEMORY_NONE);
          slot.rebind[s].push_back({m, a.buf.index, a.buf.offset});
          break;
        case BufRef::Kind::constant:
          m = constant_memory(a.buf, a.md);
          break;
        case BufRef::Kind::scratch:
          m = dnnl::memory(a.md, engine_, base + a.buf.offset);
          break;
      }
      slot.args[s][a.dnnl_arg] = m;
      if (!steps_[s].lanes.empty()) slot.lane_args[s][a.dnnl_arg >> 24][a.dnnl_arg & 0xffffff] = m;
    }
  }
  slot.ready = true;
}

void DnnlKernel::run_on(Slot& slot, void* const* args) {
  if (!slot.ready) init_slot(slot);
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (Slot::Rebind& b : slot.rebind[s])
      b.memory.set_data_handle(static_cast<uint8_t*>(args[b.arg]) + b.offset);
    if (steps_[s].host) {
      slot.stream.wait();
      steps_[s].host(slot.args[s]);
    } else if (!steps_[s].lanes.empty()) {
      slot.stream.wait();
      run_lanes(slot, s);
    } else {
      steps_[s].prim.execute(slot.stream, slot.args[s]);
    }
  }
  slot.stream.wait();
}

void DnnlKernel::run(void* const* args) {
  // oneDNN parallelises with OpenMP: run with the thread count the kernel was built for (the
  // setting is per calling thread), and put the caller's back afterwards.
  OmpThreadScope threads(created_threads_);

  for (int i = 0; i < kSlots; ++i) {
    Slot& slot = slots_[i];
    if (slot.busy.exchange(true, std::memory_order_acquire)) continue;
    struct Release {
      Slot& s;
      ~Release() { s.busy.store(false, std::memory_order_release); }
    } release{slot};
    run_on(slot, args);
    return;
  }
  // Every slot is in use: this call gets state of its own.
  Slot extra;
  run_on(extra, args);
}

}  // namespace collage::rt_dnnl
