// Helpers for the command-line tests: running the built `collage` binary and writing tiny ONNX
// models with the ONNX protobuf API.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace collage::testing {

// A fresh folder under the system temporary folder, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

struct CliResult {
  int exit_code = -1;  // -1 when the process did not exit normally (e.g. it crashed)
  std::string out, err;
};

// Runs COLLAGE_BINARY_DIR/bin/collage with `args`, capturing stdout and stderr through files in
// `dir`; XDG_CACHE_HOME is `dir`/cache, so the default cost database is the test's own.
CliResult run_collage(const TempDir& dir, const std::vector<std::string>& args);

// Writes z = Relu(MatMul(x, W)) with x: f32[4,3] and the constant W: f32[3,5], W[i][j] = (i - j) / 4.
void write_matmul_model(const std::filesystem::path& path);

// Writes the test model: inputs x, y: f32[B,3] (B = 2, or the symbolic "batch" when
// `symbolic_batch`), n: i64[4]; an initializer W: f32[2,3] = [0, 0.5, 1, 1.5, 2, 2.5]; outputs
//   z = Relu(x + W),  p = x * y,  m = n + n.
// Without `with_int`, no n and no m (every node then has a library backend: dnnl claims them).
void write_tiny_model(const std::filesystem::path& path, bool symbolic_batch = false,
                      bool with_int = true);

}  // namespace collage::testing
