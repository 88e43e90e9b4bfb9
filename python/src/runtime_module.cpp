// collage._runtime: the runtime C API (include/collage/runtime.h) for the Python package. Links
// only libcollage_runtime, so `collage.load` works where the compiler's libraries are absent.
// Tensors cross as DLPack: any CPU array that exports __dlpack__ or the buffer protocol is run
// in place, without a copy; the GIL is released while a model runs.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "collage/runtime.h"
#include "status.h"

namespace nb = nanobind;
using collage_python::check;

namespace {

// (name, collage_dtype_t, DLPack (code, bits, lanes), shape, (batch_axis, batch_min, batch_max))
// of an input or output; batch_axis -1: no batch range.
using TensorInfo = std::tuple<std::string, int32_t, std::tuple<int, int, int>,
                              std::vector<int64_t>, std::tuple<int32_t, int64_t, int64_t>>;

// Any contiguous CPU array; read-only ones are accepted as inputs. A non-contiguous one is made
// contiguous by its own framework (nanobind's implicit conversion), the only case with a copy.
using InArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using OutArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

class Module {
 public:
  explicit Module(collage_module_t* m) : m_(m) {
    // The runtime hands bool out as {kDLUInt, 8, 1}, as numpy's DLPack did; numpy's is bool.
    for (const TensorInfo& t : outputs()) {
      bool_outputs_.push_back(std::get<1>(t) == COLLAGE_DTYPE_BOOL);
      string_outputs_.push_back(std::get<1>(t) == COLLAGE_DTYPE_STRING);
    }
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module() { collage_module_release(m_); }

  std::vector<TensorInfo> inputs() const {
    return infos(collage_module_num_inputs(live()), collage_module_input_info);
  }
  std::vector<TensorInfo> outputs() const {
    return infos(collage_module_num_outputs(live()), collage_module_output_info);
  }
  uint64_t arena_bytes() const { return collage_module_arena_bytes(live()); }

  // Runs the model into `outputs` (the caller allocates them). The arrays stay referenced by
  // the argument vectors while the GIL is released.
  void run(const std::vector<InArray>& inputs, const std::vector<OutArray>& outputs) {
    std::vector<DLTensor> in(inputs.size()), out(outputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) in[i] = view(inputs[i]);
    for (size_t i = 0; i < outputs.size(); ++i) out[i] = view(outputs[i]);
    collage_status_t* status = nullptr;
    bool closed = false;
    {
      nb::gil_scoped_release unlocked;
      std::shared_lock running(mutex_);  // close() waits for the runs in progress
      if (!m_)
        closed = true;
      else
        status = collage_module_run(m_, in.data(), static_cast<int32_t>(in.size()), out.data(),
                                    static_cast<int32_t>(out.size()));
    }
    if (closed) live();  // raises
    check(status);
  }

  // Runs the model into outputs the library allocates, each with the shape it comes out with
  // (a dynamic-batch artifact's have the inputs' batch); returns them as numpy arrays that own
  // the library's buffers, released with the last of them. A string input comes as a tuple
  // (shape, list of bytes) (collage._module makes it from a numpy U/S/object array), and a
  // string output goes back the same way, its bytes copied.
  nb::list run_new(const std::vector<std::variant<nb::tuple, InArray>>& inputs) {
    std::vector<DLTensor> in(inputs.size());
    std::vector<std::vector<int64_t>> shapes(inputs.size());
    std::vector<std::vector<collage_string_t>> strings(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (const InArray* a = std::get_if<InArray>(&inputs[i])) {
        in[i] = view(*a);
        continue;
      }
      // The tuple's bytes objects stay referenced by `inputs` while the GIL is released.
      const nb::tuple& t = std::get<nb::tuple>(inputs[i]);
      shapes[i] = nb::cast<std::vector<int64_t>>(t[0]);
      for (nb::handle item : nb::borrow<nb::list>(t[1])) {
        const nb::bytes b = nb::borrow<nb::bytes>(item);
        strings[i].push_back({b.c_str(), b.size()});
      }
      DLTensor& d = in[i];
      d.data = strings[i].data();
      d.device = DLDevice{kDLCPU, 0};
      d.ndim = static_cast<int32_t>(shapes[i].size());
      d.shape = shapes[i].data();
      d.dtype = collage_dtype_to_dlpack(COLLAGE_DTYPE_STRING);
    }
    collage_outputs_t* outputs = nullptr;
    collage_status_t* status = nullptr;
    bool closed = false;
    {
      nb::gil_scoped_release unlocked;
      std::shared_lock running(mutex_);
      if (!m_)
        closed = true;
      else
        status = collage_module_run_outputs(m_, in.data(), static_cast<int32_t>(in.size()),
                                            &outputs);
    }
    if (closed) live();  // raises
    check(status);
    auto owned = std::shared_ptr<collage_outputs_t>(outputs, collage_outputs_release);
    nb::list result;
    for (int32_t i = 0; i < collage_outputs_count(outputs); ++i) {
      DLTensor t{};
      check(collage_outputs_get(outputs, i, &t));
      // The capsule keeps every output's buffers alive until its last array goes.
      nb::capsule owner(new std::shared_ptr<collage_outputs_t>(owned), [](void* p) noexcept {
        delete static_cast<std::shared_ptr<collage_outputs_t>*>(p);
      });
      std::vector<size_t> shape(t.shape, t.shape + t.ndim);
      if (string_outputs_[i]) {
        size_t n = 1;
        for (size_t d : shape) n *= d;
        nb::list values;
        for (size_t e = 0; e < n; ++e) {
          const collage_string_t& s = static_cast<const collage_string_t*>(t.data)[e];
          values.append(nb::bytes(s.data ? s.data : "", s.size));
        }
        result.append(nb::make_tuple(std::vector<int64_t>(t.shape, t.shape + t.ndim), values));
        continue;
      }
      nb::dlpack::dtype dtype{t.dtype.code, t.dtype.bits, t.dtype.lanes};
      if (bool_outputs_[i]) dtype = nb::dtype<bool>();
      result.append(nb::ndarray<nb::numpy>(t.data, shape.size(), shape.data(), owner, nullptr,
                                           dtype)
                        .cast());
    }
    return result;
  }

  void set_profiling(bool enabled) { check(collage_module_set_profiling(live(), enabled)); }
  void write_profile(const std::string& path) const {
    check(collage_module_write_profile(live(), path.c_str()));
  }

  // collage_executor_stats_t as a dict of its fields.
  nb::dict executor_stats() const {
    collage_executor_stats_t s{};
    s.struct_size = sizeof s;
    check(collage_module_executor_stats(live(), &s));
    nb::dict d;
    d["executor"] = s.executor;
    d["runs"] = s.runs;
    d["wall_ns"] = s.wall_ns;
    d["task_ns"] = s.task_ns;
    d["wait_ns"] = s.wait_ns;
    d["overhead_ns"] = s.overhead_ns;
    d["fallback_runs"] = s.fallback_runs;
    d["wake_ns"] = s.wake_ns;
    return d;
  }

  // Releases the module once the runs in progress (on other threads) have returned; later calls
  // raise ValueError.
  void close() {
    nb::gil_scoped_release unlocked;
    std::unique_lock closing(mutex_);
    collage_module_release(m_);
    m_ = nullptr;
  }

 private:
  collage_module_t* live() const {
    if (!m_) throw nb::value_error("the collage module is closed");
    return m_;
  }

  template <typename Fn>
  std::vector<TensorInfo> infos(int32_t n, Fn fn) const {
    std::vector<TensorInfo> out;
    for (int32_t i = 0; i < n; ++i) {
      collage_tensor_info_t info{};
      info.struct_size = sizeof info;
      check(fn(m_, i, &info));
      out.emplace_back(
          info.name, info.dtype,
          std::tuple<int, int, int>(info.dl_dtype.code, info.dl_dtype.bits, info.dl_dtype.lanes),
          std::vector<int64_t>(info.shape, info.shape + info.ndim),
          std::tuple<int32_t, int64_t, int64_t>(info.batch_axis, info.batch_min, info.batch_max));
    }
    return out;
  }

  template <typename Array>
  static DLTensor view(const Array& a) {
    DLTensor t{};
    t.data = a.data_handle();
    t.byte_offset = a.byte_offset();
    t.device = DLDevice{static_cast<DLDeviceType>(a.device_type()), a.device_id()};
    t.ndim = static_cast<int32_t>(a.ndim());
    t.shape = const_cast<int64_t*>(a.shape_ptr());
    t.strides = nullptr;  // c_contig: compact
    const nb::dlpack::dtype d = a.dtype();
    // DLPack >= 0.8 has a bool code; the runtime's bool is {kDLUInt, 8, 1}, as numpy's was.
    if (d.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bool))
      t.dtype = DLDataType{kDLUInt, 8, 1};
    else
      t.dtype = DLDataType{d.code, d.bits, d.lanes};
    return t;
  }

  collage_module_t* m_;
  std::vector<bool> bool_outputs_, string_outputs_;
  std::shared_mutex mutex_;
};

collage_load_options_t load_options(int32_t num_threads, uint32_t flags,
                                    const std::string& module_dir) {
  collage_load_options_t o;
  collage_load_options_init(&o);
  o.num_threads = num_threads;
  o.flags = flags;
  o.module_dir = module_dir.empty() ? nullptr : module_dir.c_str();
  return o;
}

Module* load_file(const std::string& path, int32_t num_threads, uint32_t flags,
                  const std::string& module_dir) {
  const collage_load_options_t o = load_options(num_threads, flags, module_dir);
  collage_module_t* m = nullptr;
  collage_status_t* status;
  {
    nb::gil_scoped_release unlocked;
    status = collage_module_load_file(path.c_str(), &o, &m);
  }
  check(status);
  return new Module(m);
}

Module* load_memory(nb::bytes data, int32_t num_threads, uint32_t flags,
                    const std::string& module_dir) {
  const collage_load_options_t o = load_options(num_threads, flags, module_dir);
  collage_module_t* m = nullptr;
  collage_status_t* status;
  {
    // The runtime copies the bytes (no COLLAGE_LOAD_BORROW_BUFFER); `data` outlives the call.
    nb::gil_scoped_release unlocked;
    status = collage_module_load_memory(data.c_str(), data.size(), &o, &m);
  }
  check(status);
  return new Module(m);
}

}  // namespace

NB_MODULE(_runtime, m) {
  m.doc() = "collage runtime C API binding (use the collage package, not this module)";
  m.attr("LOAD_EXECUTOR_SEQUENTIAL") = COLLAGE_LOAD_EXECUTOR_SEQUENTIAL;
  m.attr("LOAD_EXECUTOR_WAVES") = COLLAGE_LOAD_EXECUTOR_WAVES;
  m.def("runtime_version", [] { return std::string(collage_runtime_version()); });
  m.def("abi_version", &collage_runtime_abi_version);
  m.def("artifact_format_version", &collage_artifact_format_version);
  nb::class_<Module>(m, "Module")
      .def_prop_ro("inputs", &Module::inputs)
      .def_prop_ro("outputs", &Module::outputs)
      .def_prop_ro("arena_bytes", &Module::arena_bytes)
      .def("run", &Module::run, nb::arg("inputs"), nb::arg("outputs"))
      .def("run_new", &Module::run_new, nb::arg("inputs"))
      .def("set_profiling", &Module::set_profiling)
      .def("write_profile", &Module::write_profile)
      .def("executor_stats", &Module::executor_stats)
      .def("close", &Module::close);
  m.def("load_file", &load_file, nb::arg("path"), nb::arg("num_threads"), nb::arg("flags"),
        nb::arg("module_dir"), nb::rv_policy::take_ownership);
  m.def("load_memory", &load_memory, nb::arg("data"), nb::arg("num_threads"), nb::arg("flags"),
        nb::arg("module_dir"), nb::rv_policy::take_ownership);
}
