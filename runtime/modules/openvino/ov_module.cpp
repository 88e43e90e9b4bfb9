// The openvino runtime module's C function table. kernel_create imports the record's exported
// blob when this library's build number is the one that exported it, and otherwise compiles the
// region again from the IR the record also carries, saying so in the descriptor's notice (or
// refusing, under COLLAGE_KERNEL_CREATE_NO_RECOMPILE). The entry points around it, which turn
// every exception into an error code and message, are the shared ones of a team-kernel module.
#include "ov_module.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

#include "../common/team_module.h"
#include "openvino/core/version.hpp"
#include "openvino/op/constant.hpp"
#include "openvino/pass/serialize.hpp"
#include "string_sink.h"

namespace collage::rt_openvino {
namespace {

#define COLLAGE_RT_OV_STR2(x) #x
#define COLLAGE_RT_OV_STR(x) COLLAGE_RT_OV_STR2(x)
// The headers' version; the library loaded at run time may be another (library_build()).
constexpr const char* kVersion =
    "openvino-" COLLAGE_RT_OV_STR(OPENVINO_VERSION_MAJOR) "." COLLAGE_RT_OV_STR(
        OPENVINO_VERSION_MINOR) "." COLLAGE_RT_OV_STR(OPENVINO_VERSION_PATCH) "/1";

void write_text(char* buffer, size_t size, const std::string& text) {
  if (!buffer || size == 0) return;
  std::snprintf(buffer, size, "%s", text.c_str());
}

// The bytes of constant `index` of `desc` (a 1-D i8 tensor).
std::pair<const void*, size_t> constant_bytes(const collage_kernel_desc_t& desc, int32_t index,
                                              const char* what) {
  const collage_tensor_desc_t& d = desc.constant_descs[index];
  if (d.dtype != COLLAGE_DTYPE_I8 || d.rank != 1 || !d.shape || d.shape[0] < 0)
    throw RecordError(std::string("openvino record: the ") + what + " is no 1-D i8 tensor");
  if (d.shape[0] > 0 && !desc.constants[index])
    throw RecordError(std::string("openvino record: the ") + what + " has no data");
  return {desc.constants[index], static_cast<size_t>(d.shape[0])};
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// A record's IR weights: its kWeights bytes in place when they are all of them, else a copy put
// together from the blob and those bytes on the first call (kept for the kernel's life: the
// models read from it use it in place).
class RecordWeights {
 public:
  RecordWeights(RecordHeader header, const void* residue, size_t residue_size, const void* blob,
                size_t blob_size)
      : header_(std::move(header)),
        residue_(static_cast<const uint8_t*>(residue)),
        residue_size_(residue_size),
        blob_(static_cast<const uint8_t*>(blob)),
        blob_size_(blob_size) {}

  ov::Tensor tensor() {
    if (weights_in_place(header_, residue_size_))
      return ov::Tensor(ov::element::u8, ov::Shape{residue_size_}, const_cast<uint8_t*>(residue_));
    std::lock_guard<std::mutex> lock(mu_);
    if (!assembled_)
      assembled_ = std::make_unique<std::vector<uint8_t>>(
          assemble_weights(header_, residue_, residue_size_, blob_, blob_size_));
    return ov::Tensor(ov::element::u8, ov::Shape{assembled_->size()}, assembled_->data());
  }

 private:
  RecordHeader header_;
  const uint8_t* residue_;
  size_t residue_size_;
  const uint8_t* blob_;
  size_t blob_size_;
  std::mutex mu_;
  std::unique_ptr<std::vector<uint8_t>> assembled_;
};

Region* create(const collage_kernel_desc_t& desc) {
  if (desc.struct_size < COLLAGE_KERNEL_DESC_V1_BASE_SIZE)
    throw RecordError("kernel descriptor of " + std::to_string(desc.struct_size) +
                      " bytes is too small");
  if (!desc.entry || std::strcmp(desc.entry, kRegionEntry) != 0)
    throw RecordError(std::string("unknown openvino kernel '") + (desc.entry ? desc.entry : "") +
                      "'");
  const RecordHeader header = decode_header(desc.params, desc.params_size);
  const int32_t expected = header.has_blob ? 3 : 2;
  if (desc.num_constants != expected || !desc.constant_descs || !desc.constants)
    throw RecordError("openvino record: " + std::to_string(desc.num_constants) +
                      " constants, expected " + std::to_string(expected));
  const auto [xml, xml_size] = constant_bytes(desc, kModelXml, "model");
  const auto [residue, residue_size] = constant_bytes(desc, kWeights, "weights");
  std::pair<const void*, size_t> blob_bytes{nullptr, 0};
  if (header.has_blob) blob_bytes = constant_bytes(desc, kBlob, "compiled blob");
  const auto [blob, blob_size] = blob_bytes;
  // The IR's weights: the residue itself, used in place, when the record holds them all there;
  // else put together from the blob's bytes and the residue the first time a model is read.
  // Checked now, so that a record whose pieces lie outside its constants does not load.
  check_weights(header, residue_size, blob_size);
  std::vector<ArgType> args = argument_types(desc);
  const size_t num_inputs = static_cast<size_t>(desc.num_inputs);
  // The IR, read when a variant or the region itself must be compiled. The artifact's bytes stay
  // valid until the kernel is destroyed, and so does a put-together copy of the weights.
  auto weights = std::make_shared<RecordWeights>(header, residue, residue_size, blob, blob_size);
  Region::ModelSource source = [xml = xml, xml_size = xml_size, weights] {
    return std::shared_ptr<const ov::Model>(core().read_model(
        std::string(static_cast<const char*>(xml), xml_size), weights->tensor()));
  };

  const bool has_notice = COLLAGE_KERNEL_DESC_HAS(&desc, notice_size) && desc.notice &&
                          desc.notice_size > 0;
  const bool no_recompile =
      COLLAGE_KERNEL_DESC_HAS(&desc, flags) && (desc.flags & COLLAGE_KERNEL_CREATE_NO_RECOMPILE);
  const std::string here = library_build();
  std::string why;
  if (header.has_blob && header.built_with == here) {
    try {
      ov::Tensor b(ov::element::u8, ov::Shape{blob_size}, const_cast<void*>(blob));
      ov::CompiledModel compiled =
          core().import_model(b, "CPU", compile_properties(header.num_threads));
      return new Region(std::move(compiled), header.num_threads, std::move(source),
                        std::move(args), num_inputs);
    } catch (const RecordError&) {
      throw;
    } catch (const std::exception& e) {
      why = "its compiled blob does not import (" + exception_text(e) + ")";
    }
  } else if (header.has_blob) {
    why = "it was compiled by OpenVINO " + header.built_with + ", this is OpenVINO " + here;
  } else {
    why = "the artifact carries no compiled blob for it";
  }
  if (no_recompile)
    throw RecordError("openvino region: " + why +
                      "; compiling it again from its model was refused (no-recompile)");
  const auto start = std::chrono::steady_clock::now();
  ov::CompiledModel compiled =
      core().compile_model(source(), "CPU", compile_properties(header.num_threads));
  auto* region = new Region(std::move(compiled), header.num_threads, std::move(source),
                            std::move(args), num_inputs);
  if (has_notice) {
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.0f", ms_since(start));
    write_text(desc.notice, desc.notice_size,
               "openvino region: " + why + ": compiled again from its model (" + ms + " ms)");
  }
  return region;
}

// The entry points are the shared ones of a team-kernel module (../common/team_module.h).
struct Traits {
  using Kernel = Region;
  static Kernel* create(const collage_kernel_desc_t& desc) { return rt_openvino::create(desc); }
  static std::string message(const std::exception& e) {
    if (dynamic_cast<const RecordError*>(&e)) return e.what();
    return "OpenVINO: " + exception_text(e);
  }
  static constexpr const char* kKernels = "openvino regions";
};

constexpr collage_rt_module_v1_t kModule =
    rt_common::TeamModule<Traits>::table("openvino", kVersion);

}  // namespace

const collage_rt_module_v1_t* module_table() {
  return &kModule;
}

std::vector<ArgType> argument_types(const collage_kernel_desc_t& desc) {
  if (desc.num_args < 1 || !desc.args || desc.num_inputs < 0 || desc.num_inputs >= desc.num_args)
    throw RecordError("openvino region: " + std::to_string(desc.num_args) + " arguments with " +
                      std::to_string(desc.num_inputs) + " inputs");
  std::vector<ArgType> out;
  for (int32_t i = 0; i < desc.num_args; ++i) {
    const collage_tensor_desc_t& a = desc.args[i];
    if (a.rank < 0 || (a.rank > 0 && !a.shape))
      throw RecordError("openvino region: argument " + std::to_string(i) + " has no shape");
    ArgType t{element_type(a.dtype), {}};
    for (int32_t d = 0; d < a.rank; ++d) {
      if (a.shape[d] < 0)
        throw RecordError("openvino region: argument " + std::to_string(i) +
                          " has a negative dimension");
      t.shape.push_back(static_cast<size_t>(a.shape[d]));
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::unique_ptr<Region> compile_region(std::shared_ptr<const ov::Model> model, int32_t threads,
                                       std::vector<ArgType> args, size_t num_inputs) {
  ov::CompiledModel compiled = core().compile_model(model, "CPU", compile_properties(threads));
  return std::make_unique<Region>(std::move(compiled), threads, [model] { return model; },
                                  std::move(args), num_inputs);
}

namespace {

size_t constants_bytes(const ov::Model& model) {
  size_t bytes = 0;
  for (const std::shared_ptr<ov::Node>& op : model.get_ops())
    if (const auto c = std::dynamic_pointer_cast<ov::op::v0::Constant>(op))
      bytes += c->get_byte_size();
  return bytes;
}

}  // namespace

RegionBytes region_bytes(const ov::Model& model, const Region& region, bool export_blob) {
  RegionBytes out;
  std::ostringstream xml;
  std::string weights;
  const size_t weight_bytes = constants_bytes(model);
  weights.reserve(weight_bytes);
  {
    StringSink sink(weights);
    std::ostream bin(&sink);
    // Serialize is a pass over a model it may annotate: it runs on a copy.
    std::shared_ptr<ov::Model> copy = model.clone();
    ov::pass::Serialize(xml, bin).run_on_model(copy);
  }
  out.model_xml = std::move(xml).str();
  RecordHeader header;
  header.num_threads = region.threads();
  if (export_blob) {
    // The CPU plugin's export holds the weights again, with a little more.
    out.blob.reserve(weight_bytes + weight_bytes / 8 + (1 << 20));
    {
      StringSink sink(out.blob);
      std::ostream blob(&sink);
      region.compiled().export_model(blob);
    }
    header.has_blob = true;
    header.built_with = library_build();
    header.weights = share_weights(weights, constant_ranges(out.model_xml), out.blob,
                                   kMinSharedBytes, &out.weights);
  } else {
    if (!weights.empty()) header.weights.push_back({kWeights, 0, weights.size()});
    out.weights = std::move(weights);
  }
  out.params = encode_header(header);
  return out;
}

std::vector<std::pair<uint64_t, uint64_t>> constant_ranges(std::string_view xml) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  // The number in attribute `name` of `tag`, or false when it has none.
  const auto attribute = [](std::string_view tag, std::string_view name, uint64_t* value) {
    const size_t at = tag.find(name);
    if (at == std::string_view::npos) return false;
    const char* p = tag.data() + at + name.size();
    char* end = nullptr;
    *value = std::strtoull(p, &end, 10);
    return end != p && *end == '"';
  };
  for (size_t at = xml.find("<data "); at != std::string_view::npos;
       at = xml.find("<data ", at + 1)) {
    const size_t end = xml.find('>', at);
    if (end == std::string_view::npos) break;
    const std::string_view tag = xml.substr(at, end - at);
    uint64_t offset = 0, size = 0;
    if (attribute(tag, " offset=\"", &offset) && attribute(tag, " size=\"", &size))
      out.emplace_back(offset, size);
  }
  return out;
}

}  // namespace collage::rt_openvino
