// The built-in backends, registered in priority order, and the placement options of a compile.
#include "collage/backends/cuda.h"
#include "collage/backends/dnnl.h"
#include "collage/backends/dynamic.h"
#include "collage/backends/eigen.h"
#include "collage/backends/native.h"
#include "collage/backends/openvino.h"
#include "collage/backends/strings.h"
#include "collage/backends/trees.h"
#include "collage/compiler.h"
#include "collage/executor.h"

namespace collage {

absl::Status register_builtin_backends(BackendRegistry& registry,
                                       const NativeBackendOptions& native) {
  if (absl::Status s = register_dnnl_backend(registry); !s.ok()) return s;
  if (absl::Status s = register_eigen_backend(registry); !s.ok()) return s;
  if (absl::Status s = register_trees_backend(registry); !s.ok()) return s;
  if (absl::Status s = registry.add(make_native_backend(native)); !s.ok()) return s;
  if (absl::Status s = register_dynamic_backend(registry); !s.ok()) return s;
  if (absl::Status s = register_strings_backend(registry); !s.ok()) return s;
#ifdef COLLAGE_HAVE_CUDA_BACKEND
  if (absl::Status s = register_cuda_backend(registry); !s.ok()) return s;
#else
  registry.add_unavailable(std::string(kCudaBackend),
                           "collage was built without the CUDA toolkit and the cuBLAS and cuDNN "
                           "headers");
#endif
#ifdef COLLAGE_HAVE_OPENVINO
  if (absl::Status s = register_openvino_backend(registry); !s.ok()) return s;
#else
  registry.add_unavailable(std::string(kOpenvinoBackend), std::string(kOpenvinoNotBuilt));
#endif
  return registry.add(make_reference_backend());
}

PlacementOptions default_compile_placement() {
  PlacementOptions o;
  // What single:NAME and greedy leave goes to generated code, as in BYOC; it also has a runtime
  // form, which the reference backend lacks.
  o.fallback = std::string(kNativeBackend);
  o.executor = PlacementExecutor::automatic;
  return o;
}

}  // namespace collage
