// collage._compiler: the compiler C API (include/collage/collage.h) for the Python package,
// imported only when something is compiled. The GIL is released while a model compiles; the
// progress callback takes it back for each call.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collage/collage.h"
#include "status.h"

namespace nb = nanobind;
using collage_python::check;

namespace {

// The options of one compile, owning the strings collage_compile_options_t points at.
struct CompileOptions {
  std::string strategy, cost_db, backends, fallback, tree_strategy, zipmap;
  double budget_seconds = 0;
  uint64_t seed = 0;
  int32_t num_threads = 0;
  std::map<std::string, std::vector<int64_t>> input_shapes;
  int64_t batch_min = 0, batch_max = 0;  // a batch range (-1 in input_shapes marks the axis)
  std::vector<int64_t> batch_sizes;      // the batches given plans; empty: the library's choice
  nb::object progress;  // a callable(dict); unset: none
};

// Calls the Python progress callback from the compiling thread, which runs without the GIL. An
// exception raised by the callback is kept, the callback is not called again, and the exception
// is raised when the compile returns.
struct ProgressRelay {
  nb::object callback;
  std::optional<nb::python_error> error;

  static void tell(void* self, const collage_compile_progress_t* p) {
    auto* relay = static_cast<ProgressRelay*>(self);
    nb::gil_scoped_acquire locked;
    if (relay->error) return;
    try {
      nb::dict d;
      d["phase"] = p->phase;
      d["done"] = p->done;
      d["total"] = p->total;
      d["generation"] = p->generation;
      d["best_ms"] = p->best_ms;
      d["detail"] = p->detail;
      relay->callback(d);
    } catch (nb::python_error& e) {
      relay->error.emplace(std::move(e));
    }
  }
};

class Compiler {
 public:
  Compiler() { check(collage_compiler_create(&c_)); }
  Compiler(const Compiler&) = delete;
  Compiler& operator=(const Compiler&) = delete;
  ~Compiler() { collage_compiler_release(c_); }

  void load_plugin(const std::string& path) {
    check(collage_compiler_load_plugin(c_, path.c_str()));
  }

  // Compiles the model file at `model_path` into `artifact_path`; returns the report (JSON).
  std::string compile_file(const std::string& model_path, const std::string& artifact_path,
                           const CompileOptions& options) {
    char* report = nullptr;
    call(options, [&](const collage_compile_options_t* o) {
      return collage_compile_file(c_, model_path.c_str(), o, artifact_path.c_str(), &report);
    });
    return take(report);
  }

  // Compiles ONNX bytes; returns (artifact bytes, report JSON).
  std::pair<nb::bytes, std::string> compile_memory(nb::bytes model, const CompileOptions& options) {
    void* artifact = nullptr;
    size_t size = 0;
    char* report = nullptr;
    call(options, [&](const collage_compile_options_t* o) {
      return collage_compile_memory(c_, model.c_str(), model.size(), o, &artifact, &size, &report);
    });
    nb::bytes bytes(artifact, size);
    collage_free(artifact);
    return {std::move(bytes), take(report)};
  }

 private:
  // Runs `compile` with the C options of `options`, without the GIL; raises the compiler's
  // error, or else the progress callback's.
  template <typename Fn>
  void call(const CompileOptions& options, Fn compile) {
    collage_compile_options_t o;
    collage_compile_options_init(&o);
    auto text = [](const std::string& s) { return s.empty() ? nullptr : s.c_str(); };
    o.strategy = text(options.strategy);
    o.budget_seconds = options.budget_seconds;
    o.seed = options.seed;
    o.cost_db_path = text(options.cost_db);
    o.backends = text(options.backends);
    o.fallback = text(options.fallback);
    o.num_threads = options.num_threads;
    o.tree_strategy = text(options.tree_strategy);
    o.zipmap = text(options.zipmap);
    std::vector<collage_input_shape_t> shapes;
    for (const auto& [name, dims] : options.input_shapes)
      shapes.push_back({name.c_str(), static_cast<int32_t>(dims.size()), dims.data()});
    o.num_input_shapes = static_cast<int32_t>(shapes.size());
    o.input_shapes = shapes.data();
    o.batch_min = options.batch_min;
    o.batch_max = options.batch_max;
    o.num_batch_sizes = static_cast<int32_t>(options.batch_sizes.size());
    o.batch_sizes = options.batch_sizes.empty() ? nullptr : options.batch_sizes.data();
    ProgressRelay relay{options.progress, std::nullopt};
    if (options.progress.is_valid() && !options.progress.is_none()) {
      o.progress = &ProgressRelay::tell;
      o.progress_user_data = &relay;
    }
    collage_status_t* status;
    {
      nb::gil_scoped_release unlocked;
      status = compile(&o);
    }
    check(status);
    if (relay.error) relay.error->restore(), throw nb::python_error();
  }

  static std::string take(char* report) {
    std::string out = report ? report : "";
    collage_free(report);
    return out;
  }

  collage_compiler_t* c_ = nullptr;
};

}  // namespace

NB_MODULE(_compiler, m) {
  m.doc() = "collage compiler C API binding (use the collage package, not this module)";
  m.def("compiler_version", [] { return std::string(collage_compiler_version()); });
  nb::class_<CompileOptions>(m, "CompileOptions")
      .def(nb::init<>())
      .def_rw("strategy", &CompileOptions::strategy)
      .def_rw("budget_seconds", &CompileOptions::budget_seconds)
      .def_rw("seed", &CompileOptions::seed)
      .def_rw("cost_db", &CompileOptions::cost_db)
      .def_rw("backends", &CompileOptions::backends)
      .def_rw("fallback", &CompileOptions::fallback)
      .def_rw("tree_strategy", &CompileOptions::tree_strategy)
      .def_rw("zipmap", &CompileOptions::zipmap)
      .def_rw("num_threads", &CompileOptions::num_threads)
      .def_rw("input_shapes", &CompileOptions::input_shapes)
      .def_rw("batch_min", &CompileOptions::batch_min)
      .def_rw("batch_max", &CompileOptions::batch_max)
      .def_rw("batch_sizes", &CompileOptions::batch_sizes)
      .def_rw("progress", &CompileOptions::progress);
  nb::class_<Compiler>(m, "Compiler")
      .def(nb::init<>())
      .def("load_plugin", &Compiler::load_plugin)
      .def("compile_file", &Compiler::compile_file)
      .def("compile_memory", &Compiler::compile_memory);
}
