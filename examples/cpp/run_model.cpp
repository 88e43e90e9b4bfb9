// Compiles a model (or loads an artifact) and times it, from C++ through the C APIs with small
// RAII wrappers: the pattern a C++ application embedding collage follows.
//
//   collage_run_model MODEL.onnx|MODEL.collage INPUT.npy [REPEAT]
//
// An ONNX model is compiled in memory with the single:eigen strategy; an artifact (told apart
// by its "COLLAGE" magic) is loaded directly. Prints the median time of REPEAT runs (default 10)
// and the argmax of the first output.
#include <collage/collage.h>
#include <collage/runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
#include "npy.h"
}

namespace {

// Turns a status into an exception (the C API itself never throws).
void check(collage_status_t* status) {
  if (!status) return;
  std::string message = collage_status_message(status);
  collage_status_free(status);
  throw std::runtime_error(message);
}

struct ModuleDeleter {
  void operator()(collage_module_t* m) const { collage_module_release(m); }
};
struct CompilerDeleter {
  void operator()(collage_compiler_t* c) const { collage_compiler_release(c); }
};
struct BufferDeleter {
  void operator()(void* p) const { collage_free(p); }
};
using Module = std::unique_ptr<collage_module_t, ModuleDeleter>;

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

Module load(const std::string& path) {
  const std::string bytes = read_file(path);
  collage_module_t* m = nullptr;
  if (bytes.compare(0, 8, std::string("COLLAGE\0", 8)) == 0) {
    check(collage_module_load_memory(bytes.data(), bytes.size(), nullptr, &m));
    return Module(m);
  }
  collage_compiler_t* raw = nullptr;
  check(collage_compiler_create(&raw));
  std::unique_ptr<collage_compiler_t, CompilerDeleter> compiler(raw);
  collage_compile_options_t options;
  collage_compile_options_init(&options);
  options.strategy = "single:eigen";
  void* artifact = nullptr;
  size_t size = 0;
  check(collage_compile_memory(compiler.get(), bytes.data(), bytes.size(), &options, &artifact,
                               &size, nullptr));
  std::unique_ptr<void, BufferDeleter> owned(artifact);
  check(collage_module_load_memory(artifact, size, nullptr, &m));  // copies the bytes
  return Module(m);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.onnx|MODEL.collage INPUT.npy [REPEAT]\n", argv[0]);
    return 2;
  }
  try {
    Module module = load(argv[1]);
    npy_array_t input;
    char err[256];
    if (npy_read_f32(argv[2], &input, err, sizeof err) != 0) throw std::runtime_error(err);
    std::unique_ptr<npy_array_t, void (*)(npy_array_t*)> input_owner(&input, npy_free);

    collage_tensor_info_t out_info{};
    out_info.struct_size = sizeof out_info;
    check(collage_module_output_info(module.get(), 0, &out_info));
    if (collage_module_num_inputs(module.get()) != 1 ||
        collage_module_num_outputs(module.get()) != 1 || out_info.dtype != COLLAGE_DTYPE_F32)
      throw std::runtime_error("expected a model with one input and one f32 output");
    std::vector<float> output(out_info.bytes / sizeof(float));
    DLTensor x{input.data, {kDLCPU, 0}, input.ndim, {kDLFloat, 32, 1}, input.shape, nullptr, 0};
    DLTensor y{output.data(),
               {kDLCPU, 0},
               out_info.ndim,
               out_info.dl_dtype,
               const_cast<int64_t*>(out_info.shape),
               nullptr,
               0};

    const int repeat = argc > 3 ? std::max(1, std::atoi(argv[3])) : 10;
    std::vector<double> ms;
    for (int i = 0; i < repeat; ++i) {
      const auto start = std::chrono::steady_clock::now();
      check(collage_module_run(module.get(), &x, 1, &y, 1));
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    std::sort(ms.begin(), ms.end());
    const auto best = std::max_element(output.begin(), output.end()) - output.begin();
    std::printf("median %.3f ms over %d runs, arena %llu bytes\n", ms[ms.size() / 2], repeat,
                static_cast<unsigned long long>(collage_module_arena_bytes(module.get())));
    std::printf("argmax of output 0 '%s': %lld \n", out_info.name, static_cast<long long>(best));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
