// Helpers of the runtime tests: small models compiled into artifacts with the Eigen backend, and
// the C API driven with collage Tensors.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "artifact/artifact.h"
#include "artifact/artifact_file.h"
#include "collage/graph.h"
#include "collage/placement.h"
#include "collage/runtime.h"
#include "collage/tensor.h"
#include "common/runtime_c_util.h"

namespace collage::testing {

// x f32[4x16] -> MatMul(w1 16x32) -> Add(b1) -> Relu -> MatMul(w2 32x10) -> Add(b2) -> "logits".
Graph mlp_graph(const Context& ctx);
// The MLP with extra outputs the runtime must copy: "logits", the hidden Relu (also read by the
// second MatMul), "logits" again, the input "x", and a constant.
Graph multi_output_graph(const Context& ctx);

// `graph` placed with single:BACKEND (eigen or dnnl) and `fallback` taking the rest, built and
// serialized; no group may be left on the reference backend.
std::string backend_artifact(const Graph& graph, std::string_view backend,
                             std::string_view fallback = "reference",
                             ArtifactSummary* summary = nullptr);

// Every node of `graph` on `backend`, one group each.
Placement one_group_per_node(const Graph& graph, std::string_view backend);

// Loads `bytes` through collage_module_load_memory with `options` (may be null); on failure
// returns null and puts the code and message in `code` / `message`.
ModulePtr load_bytes(const std::string& bytes, const collage_load_options_t* options, int32_t* code,
                     std::string* message);

// Runs `m` through collage_module_run_outputs (outputs allocated by the library, of the shapes
// they come out with) and copies the outputs (f32, f64, i32, i64, bool); `message` gets the run's
// error ("" on success), with no outputs then.
std::vector<Tensor> run_outputs(const collage_module_t* m, const std::vector<Tensor>& inputs,
                                std::string* message);

// The sections of a well-formed artifact, as assemble_artifact takes them.
std::vector<artifact::FileSection> split_sections(const std::string& file);
// Recomputes every section checksum and the header checksum of `file` after an edit.
void rechecksum(std::string& file);

// Whole-file helpers.
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);

}  // namespace collage::testing
