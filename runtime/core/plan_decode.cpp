// decode_plan: the FlatBuffers plan verified, then copied into a Program field by field with
// every value checked against its bounds.
#include "plan_decode.h"

#include <limits>

#include "artifact_generated.h"
#include "format.h"

namespace collage::rt {
namespace {

namespace fb = collage::artifact::fb;

// Generous bounds that keep a hostile plan from asking for absurd amounts of work or memory.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 44;
constexpr uint64_t kMaxArenaBytes = uint64_t{1} << 44;
constexpr int32_t kMaxTasks = 1 << 16;
constexpr size_t kMaxModuleName = 64;

Status corrupt(const std::string& what) {
  return Status(Code::corrupt, "corrupt artifact plan: " + what);
}

std::string str(const flatbuffers::String* s) {
  return s ? s->str() : std::string();
}

// A runtime module's name becomes part of a file name: letters, digits, '_' and '-' only.
bool valid_module_name(const flatbuffers::String* s) {
  if (!s || s->size() == 0 || s->size() > kMaxModuleName) return false;
  for (char c : s->string_view())
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-'))
      return false;
  return true;
}

// dtype and shape checked, and the byte size computed without overflow. With `unknown_dims`,
// dimensions of -1 (known at run time) are allowed, and the byte size is 0.
Status decode_type(const std::string& what, int32_t dtype,
                   const flatbuffers::Vector<int64_t>* shape, std::vector<int64_t>* out_shape,
                   uint64_t* bytes, bool unknown_dims = false) {
  if (dtype < 0 || dtype >= kNumDTypes) return corrupt(cat(what, ": dtype ", dtype));
  const uint32_t rank = shape ? shape->size() : 0;
  if (rank > static_cast<uint32_t>(kMaxRank)) return corrupt(cat(what, ": rank ", rank));
  // The verifier checks a vector's length field for 4-byte alignment only; 8-byte elements
  // must not be read misaligned. An empty vector (a scalar's shape) has no elements, and
  // flatbuffers aligns only its length field: its data pointer may be misaligned, harmlessly.
  if (rank > 0 && reinterpret_cast<uintptr_t>(shape->data()) % alignof(int64_t) != 0)
    return corrupt(cat(what, ": misaligned shape"));
  uint64_t n = dtype_size(dtype);
  out_shape->clear();
  bool unknown = false;
  for (uint32_t i = 0; i < rank; ++i) {
    const int64_t d = shape->Get(i);
    if (d == -1 && unknown_dims) {
      unknown = true;
      out_shape->push_back(d);
      continue;
    }
    if (d < 0) return corrupt(cat(what, ": dimension ", i, " is ", d));
    if (d != 0 && n > kMaxTensorBytes / static_cast<uint64_t>(d))
      return corrupt(cat(what, ": more than 2^44 bytes"));
    n *= static_cast<uint64_t>(d);
    out_shape->push_back(d);
  }
  *bytes = unknown ? 0 : n;
  return Status();
}

template <typename T>
Status decode_ids(const std::string& what, const flatbuffers::Vector<uint32_t>* ids, size_t bound,
                  std::vector<T>* out) {
  out->clear();
  if (!ids) return Status();
  for (uint32_t i = 0; i < ids->size(); ++i) {
    if (ids->Get(i) >= bound)
      return corrupt(cat(what, " ", i, " is ", ids->Get(i), ", beyond the ", bound, " there are"));
    out->push_back(ids->Get(i));
  }
  return Status();
}

Status decode_tensors(const fb::Plan& plan, Program* p) {
  const auto* tensors = plan.tensors();
  if (!tensors) return Status();
  for (uint32_t i = 0; i < tensors->size(); ++i) {
    const fb::Tensor* t = tensors->Get(i);
    TensorInfo& info = p->tensors.emplace_back();
    info.name = str(t->name());
    const std::string what = cat("tensor ", i, " '", info.name, "'");
    const bool dynamic = t->storage() == fb::Storage::Dynamic;
    COLLAGE_RT_RETURN_IF_ERROR(
        decode_type(what, t->dtype(), t->shape(), &info.shape, &info.bytes, dynamic));
    info.dtype = t->dtype();
    if (info.dtype == kStringDType) {
      if (p->format_version < 3)
        return corrupt(cat(what, ": a string tensor in a format version ", p->format_version,
                           " artifact"));
      p->has_strings = true;
    }
    info.location = t->location();
    switch (t->storage()) {
      case fb::Storage::Arena:
        info.storage = Storage::arena;
        if (info.location % artifact::kAlignment != 0 || info.location > p->arena_bytes ||
            info.bytes > p->arena_bytes - info.location)
          return corrupt(cat(what, ": arena offset ", info.location, " (", info.bytes,
                             " bytes) outside the ", p->arena_bytes, "-byte arena or misaligned"));
        break;
      case fb::Storage::Constant: {
        info.storage = Storage::constant;
        if (info.location >= p->constants.size())
          return corrupt(cat(what, ": constant ", info.location, " does not exist"));
        const ConstantInfo& c = p->constants[info.location];
        if (c.dtype != info.dtype || c.shape != info.shape)
          return corrupt(cat(what, ": its constant has another type"));
        break;
      }
      case fb::Storage::Input:
        info.storage = Storage::input;
        if (!plan.inputs() || info.location >= plan.inputs()->size() ||
            plan.inputs()->Get(static_cast<uint32_t>(info.location)) != i)
          return corrupt(cat(what, ": not graph input ", info.location));
        break;
      case fb::Storage::Output:
        info.storage = Storage::output;
        if (!plan.outputs() || info.location >= plan.outputs()->size() ||
            plan.outputs()->Get(static_cast<uint32_t>(info.location)) != i)
          return corrupt(cat(what, ": not graph output ", info.location));
        break;
      case fb::Storage::Dynamic:
        if (p->format_version < 2)
          return corrupt(cat(what, ": dynamic storage in a format version ", p->format_version,
                             " artifact"));
        if (info.location != 0)
          return corrupt(cat(what, ": dynamic, at location ", info.location));
        info.storage = Storage::dynamic;
        p->has_dynamic = true;
        break;
      default:
        return corrupt(cat(what, ": storage kind ", static_cast<int>(t->storage())));
    }
  }
  return Status();
}

// A string constant's table in the constants section (docs/artifact-format.md): n + 1
// little-endian u64 offsets into the bytes that follow them (the first 0, never decreasing, the
// last the bytes' size), then the bytes. Decoded into one collage_string_t per element.
Status decode_string_constant(const std::string& what, const fb::Constant& c,
                              std::span<const uint8_t> section, const Program* p,
                              ConstantInfo* info) {
  if (p->format_version < 3)
    return corrupt(cat(what, ": a string constant in a format version ", p->format_version,
                       " artifact"));
  uint64_t n = 1;
  for (int64_t d : info->shape) n *= static_cast<uint64_t>(d);  // decode_type bounded it
  const uint64_t table = (n + 1) * 8;
  if (c.offset() % artifact::kAlignment != 0 || c.offset() > section.size() ||
      c.size() > section.size() - c.offset() || c.size() < table)
    return corrupt(cat(what, ": string table at offset ", c.offset(), " (", c.size(),
                       " bytes, ", n, " strings) outside the ", section.size(),
                       "-byte constants section, misaligned or too short"));
  const uint8_t* base = section.data() + c.offset();
  const uint64_t text = c.size() - table;
  auto strings = std::make_shared<std::vector<collage_string_t>>(n);
  uint64_t previous = artifact::load_u64(base);
  if (previous != 0) return corrupt(cat(what, ": string table: offset 0 is ", previous));
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t next = artifact::load_u64(base + 8 * (i + 1));
    if (next < previous || next > text)
      return corrupt(cat(what, ": string table: string ", i, " ends at ", next, ", after ",
                         previous, " (", text, " bytes of text)"));
    (*strings)[i] = {reinterpret_cast<const char*>(base + table + previous), next - previous};
    previous = next;
  }
  if (previous != text)
    return corrupt(cat(what, ": string table: the strings take ", previous, " of its ", text,
                       " bytes of text"));
  info->strings = std::move(strings);
  info->data = reinterpret_cast<const uint8_t*>(info->strings->data());
  info->bytes = n * sizeof(collage_string_t);
  return Status();
}

Status decode_constants(const fb::Plan& plan, std::span<const uint8_t> section, Program* p) {
  const auto* constants = plan.constants();
  if (!constants) return Status();
  for (uint32_t i = 0; i < constants->size(); ++i) {
    const fb::Constant* c = constants->Get(i);
    ConstantInfo& info = p->constants.emplace_back();
    const std::string what = cat("constant ", i);
    uint64_t bytes = 0;
    COLLAGE_RT_RETURN_IF_ERROR(decode_type(what, c->dtype(), c->shape(), &info.shape, &bytes));
    info.dtype = c->dtype();
    if (info.dtype == kStringDType) {
      COLLAGE_RT_RETURN_IF_ERROR(decode_string_constant(what, *c, section, p, &info));
      continue;
    }
    if (c->size() != bytes)
      return corrupt(cat(what, ": ", c->size(), " bytes for a tensor of ", bytes));
    if (c->offset() % artifact::kAlignment != 0 || c->offset() > section.size() ||
        bytes > section.size() - c->offset())
      return corrupt(cat(what, ": offset ", c->offset(), " (", bytes, " bytes) outside the ",
                         section.size(), "-byte constants section or misaligned"));
    info.data = section.data() + c->offset();
    info.bytes = bytes;
  }
  return Status();
}

Status decode_kernels(const fb::Plan& plan, Program* p) {
  const auto* kernels = plan.kernels();
  if (!kernels) return Status();
  for (uint32_t i = 0; i < kernels->size(); ++i) {
    const fb::Kernel* k = kernels->Get(i);
    KernelInfo& info = p->kernels.emplace_back();
    info.name = str(k->name());
    info.backend = str(k->backend());
    info.entry = str(k->entry());
    const std::string what = cat("kernel ", i, " (", info.backend, ": ", info.name, ")");
    if (k->module_index() >= p->modules.size())
      return corrupt(cat(what, ": module ", k->module_index(), " does not exist"));
    info.module = k->module_index();
    if (k->params()) info.params = {k->params()->data(), k->params()->size()};
    COLLAGE_RT_RETURN_IF_ERROR(
        decode_ids(what + ": constant", k->constants(), p->constants.size(), &info.constants));
    COLLAGE_RT_RETURN_IF_ERROR(
        decode_ids(what + ": argument", k->args(), p->tensors.size(), &info.args));
    info.num_inputs = k->num_inputs();
    if (info.num_inputs >= info.args.size())
      return corrupt(cat(what, ": ", info.num_inputs, " inputs of ", info.args.size(),
                         " arguments (no outputs)"));
    info.task_count = k->task_count();
    if (info.task_count < 1 || info.task_count > kMaxTasks)
      return corrupt(cat(what, ": task count ", info.task_count));
    for (uint32_t t : info.args) {
      info.dynamic = info.dynamic || p->tensors[t].storage == Storage::dynamic;
      info.strings = info.strings || p->tensors[t].dtype == kStringDType;
    }
    if ((info.dynamic || info.strings) &&
        (p->modules[info.module] == "native" || info.task_count != 1))
      return corrupt(cat(what, info.strings ? ": strings" : ": data-dependent shapes",
                         " in a native kernel or over ", info.task_count, " tasks"));
  }
  return Status();
}

}  // namespace

Status decode_plan(std::span<const uint8_t> bytes, std::span<const uint8_t> constants, Program* p) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), /*max_depth=*/16,
                                 /*max_tables=*/1 << 24);
  if (!fb::VerifyPlanBuffer(verifier))
    return corrupt("the FlatBuffer does not verify (truncated or damaged)");
  const fb::Plan& plan = *fb::GetPlan(bytes.data());
  COLLAGE_RT_RETURN_IF_ERROR(decode_plan_table(plan, constants, p));
  return decode_dynamic_batch(plan, constants, p);
}

Status decode_plan_table(const fb::Plan& plan, std::span<const uint8_t> constants, Program* p) {
  p->graph_name = str(plan.graph_name());
  if (plan.batch() < 0) return corrupt(cat("batch ", plan.batch()));
  p->batch = plan.batch();
  p->arena_bytes = plan.arena_bytes();
  if (p->arena_bytes > kMaxArenaBytes) return corrupt(cat("arena of ", p->arena_bytes, " bytes"));
  if (const auto* modules = plan.modules()) {
    for (uint32_t i = 0; i < modules->size(); ++i) {
      if (!valid_module_name(modules->Get(i)))
        return corrupt(cat("module ", i, ": the name '", str(modules->Get(i)),
                           "' is not 1-64 letters, digits, '_' or '-'"));
      p->modules.push_back(modules->Get(i)->str());
    }
  }
  COLLAGE_RT_RETURN_IF_ERROR(decode_constants(plan, constants, p));
  COLLAGE_RT_RETURN_IF_ERROR(decode_tensors(plan, p));
  COLLAGE_RT_RETURN_IF_ERROR(
      decode_ids("graph input", plan.inputs(), p->tensors.size(), &p->inputs));
  COLLAGE_RT_RETURN_IF_ERROR(
      decode_ids("graph output", plan.outputs(), p->tensors.size(), &p->outputs));
  for (size_t i = 0; i < p->inputs.size(); ++i)
    if (p->tensors[p->inputs[i]].storage != Storage::input ||
        p->tensors[p->inputs[i]].location != i)
      return corrupt(cat("graph input ", i, " is not an input tensor"));
  for (size_t i = 0; i < p->outputs.size(); ++i)
    if (p->tensors[p->outputs[i]].storage == Storage::arena)
      return corrupt(cat("graph output ", i, " lives in the arena"));
  COLLAGE_RT_RETURN_IF_ERROR(decode_kernels(plan, p));
  COLLAGE_RT_RETURN_IF_ERROR(decode_wave_schedule(plan.schedule(), p));
  if (p->has_schedule && (p->has_dynamic || p->has_strings))
    return corrupt(cat("a wave schedule for a plan with ",
                       p->has_dynamic ? "data-dependent shapes" : "strings",
                       " (it runs sequentially)"));
  return Status();
}

}  // namespace collage::rt
