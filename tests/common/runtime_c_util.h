// Helpers of the tests that call the runtime's C API (libcollage_runtime): status messages and
// DLTensor views of collage tensors.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/runtime.h"
#include "collage/tensor.h"

namespace collage::testing {

struct ModuleDeleter {
  void operator()(collage_module_t* m) const { collage_module_release(m); }
};
// A loaded module, released when it goes out of scope.
using ModulePtr = std::unique_ptr<collage_module_t, ModuleDeleter>;

// The message of `status`: "" for success (a null status), "(no message)" for a failure without
// one; frees the status.
std::string take_message(collage_status_t* status);

// A DLTensor on the CPU viewing `t` (which must outlive it), with t's element type.
DLTensor dl_view(const Tensor& t);

// Runs `m` on `inputs`, allocating outputs of the module's output types. On failure returns an
// empty vector and puts the code and message in `code` / `message`. Makes no test assertions,
// so threads may call it.
std::vector<Tensor> run_module(const collage_module_t* m, const std::vector<Tensor>& inputs,
                               int32_t* code = nullptr, std::string* message = nullptr);

// Runs `m` through collage_module_run_outputs, str inputs passed as collage_string_t arrays and
// str outputs copied out of the library's strings, every output with the module's dtype and the
// shape it came out with. On failure returns an empty vector with the message in `message`.
// Makes no test assertions.
std::vector<Tensor> run_module_outputs(const collage_module_t* m,
                                       const std::vector<Tensor>& inputs, std::string* message);

}  // namespace collage::testing
