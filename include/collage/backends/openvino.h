// The openvino backend: regions of a graph run by OpenVINO's CPU plugin. It claims every node of
// the operators it can hand to OpenVINO (the ONNX operators of the IR, trees excluded) as
// candidates of three kinds: each node alone (openvino.op), an anchor followed along its
// single-use chain by elementwise operators (openvino.chain, up to RuleOptions::max_depth nodes),
// and each maximal convex region of such nodes (openvino.region: the whole model, when OpenVINO
// runs all of it). A group is written as an ONNX model (opset 20) and read by OpenVINO's ONNX
// frontend, then compiled for the CPU with BuildOptions::num_threads threads (latency hint, f32,
// one stream).
//
// Kernel records: module "openvino" (libcollage_rt_openvino), entry "region", params a small
// header, constants the region as OpenVINO IR (XML and weights) and the compiled model that
// OpenVINO exported; the runtime imports the latter when its OpenVINO is the same build and
// compiles the IR again otherwise. Built only where CMake found OpenVINO
// (COLLAGE_HAVE_OPENVINO is then defined for the code that links it); the CLI and the compiler's
// C API register it then, and record kOpenvinoNotBuilt otherwise.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "collage/backend.h"

namespace collage {

inline constexpr std::string_view kOpenvinoBackend = "openvino";

// Why a library built without OpenVINO has no openvino backend (BackendRegistry::add_unavailable).
inline constexpr std::string_view kOpenvinoNotBuilt =
    "this build has no OpenVINO (CMake did not find the openvino wheel in the project's .venv, "
    "which scripts/install-deps installs; rebuild after installing it)";

// A new openvino backend (device cpu, version "openvino-<build number>/1").
std::unique_ptr<Backend> make_openvino_backend();
// Adds make_openvino_backend() to `registry`; AlreadyExists when "openvino" is taken.
absl::Status register_openvino_backend(BackendRegistry& registry);

}  // namespace collage
