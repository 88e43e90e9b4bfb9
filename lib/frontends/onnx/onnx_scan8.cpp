// ONNX Scan version 8: every input has a leading batch axis (scan inputs [batch, sequence, ...])
// and an optional sequence_lens. Lowered onto the Scan of version 9 and later, one per batch row:
// each row's states and scan inputs are gathered, a row shorter than the sequence (sequence_lens)
// cut to its length, scanned over the (now first) sequence axis, its scan outputs padded with
// zeros back to the sequence length, and the rows' results stacked back along the batch axis.
#include "core/str_cat.h"
#include "frontends/onnx/onnx_graph.h"

namespace collage::onnx_import {
namespace {

// Batch rows lowered one by one before a node is refused.
constexpr int64_t kMaxBatch = 256;

Ref constant_ref(Tensor t, std::string name) {
  TensorType type = t.type();
  return Ref{kNoValue, std::move(t), std::move(type), std::move(name)};
}

}  // namespace

absl::Status GraphImporter::import_scan8(const onnx::NodeProto& node, const std::string& shown,
                                         const std::vector<Ref*>& inputs) {
  const std::string who = str_cat("Scan '", shown, "'");
  if (inputs.size() < 2)
    return absl::InvalidArgumentError(
        str_cat(who, ": version 8 takes sequence_lens (may be empty) and at least one input"));
  int64_t num_scan = -1;
  onnx::NodeProto scan9;
  scan9.set_op_type("Scan");
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == "num_scan_inputs") num_scan = a.i();
    if (a.name() == "directions") {
      onnx::AttributeProto* d = scan9.add_attribute();
      *d = a;
      d->set_name("scan_input_directions");
    } else if (a.name() == "body" || a.name() == "num_scan_inputs") {
      *scan9.add_attribute() = a;
    } else {
      return absl::InvalidArgumentError(str_cat(who, ": unknown attribute '", a.name(), "'"));
    }
  }
  const std::vector<Ref*> values(inputs.begin() + 1, inputs.end());
  if (num_scan < 1 || num_scan > static_cast<int64_t>(values.size()))
    return absl::InvalidArgumentError(str_cat(who, ": num_scan_inputs must be between 1 and its ",
                                              values.size(), " inputs after sequence_lens"));
  int64_t batch = -1, length = -1;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) return absl::InvalidArgumentError(str_cat(who, ": input ", i + 1, " is empty"));
    const Shape& s = values[i]->type.shape;
    const bool scan = static_cast<int64_t>(i) >= static_cast<int64_t>(values.size()) - num_scan;
    if (s.size() < (scan ? 2u : 1u))
      return absl::InvalidArgumentError(str_cat(who, ": input ", i + 1, " has shape ",
                                                shape_to_string(s), "; version 8 needs ",
                                                scan ? "[batch, sequence, ...]" : "[batch, ...]"));
    if (batch >= 0 && s[0] != batch)
      return absl::InvalidArgumentError(
          str_cat(who, ": inputs of batch sizes ", batch, " and ", s[0]));
    batch = s[0];
    if (scan) length = s[1];
  }
  if (batch < 1 || batch > kMaxBatch)
    return absl::UnimplementedError(str_cat(who, ": version 8 with batch ", batch,
                                            " (collage lowers batches 1 to ", kMaxBatch, ")"));
  // sequence_lens: absent (every row the whole sequence) or a constant of 1 to `length` per row.
  std::vector<int64_t> lens(static_cast<size_t>(batch), length);
  if (Ref* given = inputs[0]) {
    if (!given->is_constant())
      return absl::UnimplementedError(
          str_cat(who, ": sequence_lens computed at run time is not supported"));
    if (given->constant.numel() != batch)
      return absl::InvalidArgumentError(str_cat(who, ": sequence_lens has ", given->constant.numel(),
                                                " entries for batch ", batch));
    for (int64_t b = 0; b < batch; ++b) {
      lens[b] = given->constant.get_as_int64(b);
      if (lens[b] < 1 || lens[b] > length)
        return absl::InvalidArgumentError(str_cat(who, ": sequence_lens ", lens[b],
                                                  " for batch row ", b, " is outside 1 to ",
                                                  length));
    }
  }
  const int outputs = node.output_size();
  const int64_t num_states = static_cast<int64_t>(values.size()) - num_scan;
  std::vector<std::vector<Ref>> per_output(outputs);
  for (int64_t b = 0; b < batch; ++b) {
    const std::string row = str_cat(shown, "/batch", b);
    Ref index = constant_ref(Tensor::scalar_i64(b), str_cat(row, "/index"));
    std::vector<Ref> rows;
    rows.reserve(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      auto r = emit("Gather", {values[i], &index}, {{"axis", int64_t{0}}},
                    pick_node_name(str_cat(row, "/in", i), {}, 1), {}, 1);
      if (!r.ok()) return r.status();
      // A short row scans its first lens[b] steps (in either direction), as ONNX Runtime does.
      if (static_cast<int64_t>(i) >= num_states && lens[b] < length) {
        r = emit("Slice", {&r->front()},
                 {{"starts", std::vector<int64_t>{0}},
                  {"ends", std::vector<int64_t>{lens[b]}},
                  {"axes", std::vector<int64_t>{0}}},
                 pick_node_name(str_cat(row, "/in", i, "/head"), {}, 1), {}, 1);
        if (!r.ok()) return r.status();
      }
      rows.push_back(std::move(r->front()));
    }
    onnx::NodeProto step = scan9;
    for (int k = 0; k < outputs; ++k) step.add_output(str_cat(row, "/out", k));
    std::vector<Ref*> ins;
    for (Ref& r : rows) ins.push_back(&r);
    if (absl::Status s = import_scan(step, row, ins); !s.ok()) return s;
    for (int k = 0; k < outputs; ++k) {
      auto r = lookup(step.output(k));
      if (!r.ok()) return r.status();
      if (!*r) return absl::InvalidArgumentError(str_cat(who, ": the body gives no output ", k));
      Ref out = **r;
      // A short row's scan outputs are zeros after its last step.
      if (k >= num_states && lens[b] < length) {
        std::vector<int64_t> pads(2 * out.type.shape.size(), 0);
        pads[out.type.shape.size()] = length - lens[b];
        auto padded = emit("Pad", {&out}, {{"pads", pads}},
                           pick_node_name(str_cat(row, "/out", k, "/zeros"), {}, 1), {}, 1);
        if (!padded.ok()) return padded.status();
        out = std::move(padded->front());
      }
      per_output[k].push_back(std::move(out));
    }
  }
  std::vector<Ref> results;
  for (int k = 0; k < outputs; ++k) {
    auto r = stack_refs(per_output[k], 0, str_cat(shown, "/out", k));
    if (!r.ok()) return r.status();
    results.push_back(std::move(*r));
  }
  return bind_outputs(node, shown, std::move(results));
}

}  // namespace collage::onnx_import
