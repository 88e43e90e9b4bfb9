// The dnnl backend: builds a group by analysing it, emitting the runtime module's parameters,
// packing the weights once into the layouts oneDNN picks, and instantiating the kernel through
// the module's own function table (the code libcollage_rt_dnnl runs in an artifact).
#include <cstring>
#include <numeric>

#include "backends/common/module_kernel.h"
#include "backends/dnnl/dnnl_emit.h"
#include "backends/dnnl/dnnl_group.h"
#include "backends/dnnl/dnnl_layouts.h"
#include "backends/dnnl/dnnl_patterns.h"
#include "collage/backends/dnnl.h"
#include "core/str_cat.h"
#include "dnnl_module.h"
#include "oneapi/dnnl/dnnl.h"

namespace collage {
namespace {

std::string dnnl_backend_version() {
  const dnnl_version_t* v = dnnl_version();
  return str_cat("onednn-", v->major, ".", v->minor, ".", v->patch, "/1");
}

// Creates the kernel once to learn which constants its primitives want in another layout, and
// stores those reordered, so that loading the record reorders nothing.
absl::Status pack_constants(KernelRecord& record, rt_dnnl::Header& header,
                            const std::vector<uint8_t>& body, const Graph& group) {
  KernelDesc desc(record, group);
  rt_dnnl::ProbeResult probe = rt_dnnl::probe_kernel(desc.desc());
  if (!probe.error.empty())
    return absl::InvalidArgumentError(
        str_cat("dnnl cannot build '", record.entry, "': ", probe.error));
  if (probe.packed.empty()) return absl::OkStatus();
  for (rt_dnnl::PackedConstant& p : probe.packed) {
    const DType dtype = record.constants[p.index].dtype();
    Tensor t(dtype, {static_cast<int64_t>(p.bytes.size() / dtype_size(dtype))});
    std::memcpy(t.raw(), p.bytes.data(), t.bytes());
    record.constants[p.index] = std::move(t);
    header.constant_layouts[p.index] = std::move(p.layout);
  }
  record.params = dnnl_backend::serialize_params(header, body);
  return absl::OkStatus();
}

class DnnlBackend : public Backend {
 public:
  DnnlBackend() : Backend(std::string(kDnnlBackend), DeviceKind::cpu, dnnl_backend_version()) {
    dnnl_backend::add_dnnl_patterns(*this);
  }

  bool accepts_layout(const Graph& group, ValueId v, const Layout& layout) const override {
    return dnnl_backend::takes_layout(group, v, layout);
  }

  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions& options) const override {
    for (const std::vector<ValueId>* side : {&group.inputs(), &group.outputs()})
      for (ValueId v : *side)
        if (!dnnl_backend::takes_layout(group, v, group.value(v).layout))
          return absl::InvalidArgumentError(
              str_cat("dnnl: value '", group.value(v).name, "' is in layout ",
                      layout_name(group.value(v).layout, group.value(v).type.shape.size()),
                      ", which this group does not take"));
    std::vector<NodeId> nodes(group.nodes().size());
    std::iota(nodes.begin(), nodes.end(), 0);
    auto plan = dnnl_backend::analyze_group(group, nodes, /*standalone=*/true);
    if (!plan.ok()) return plan.status();
    auto emitted = dnnl_backend::emit_kernel(group, *plan, options.num_threads);
    if (!emitted.ok()) return emitted.status();
    KernelRecord record;
    record.module = std::string(kDnnlBackend);
    record.entry = rt_dnnl::op_kind_name(emitted->header.kind);
    record.constants = std::move(emitted->constants);
    record.params = dnnl_backend::serialize_params(emitted->header, emitted->body);
    if (absl::Status s = pack_constants(record, emitted->header, emitted->body, group); !s.ok())
      return s;
    return make_module_kernel(rt_dnnl::module_table(), std::move(record), group);
  }
};

}  // namespace

std::unique_ptr<Backend> make_dnnl_backend() {
  return std::make_unique<DnnlBackend>();
}

absl::Status register_dnnl_backend(BackendRegistry& registry) {
  return registry.add(make_dnnl_backend());
}

}  // namespace collage
