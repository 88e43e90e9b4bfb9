// Object emission and linking: a host shared library loaded with dlopen and run, an aarch64 object
// and shared library checked by their ELF headers, assembly with the host's widest vectors, and
// the errors of the CPU code generator.
#include <dlfcn.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "codegen/llvm/object.h"
#include "jit_test_util.h"

using namespace collage;
namespace te = collage::te;
namespace fs = std::filesystem;

namespace {

// A vectorized, parallel kernel: Y[i, j] = X[i, j] * 2 + 1 over 6x37.
te::PrimFunc sample_kernel(const std::string& name) {
  te::Tensor X = te::placeholder({6, 37}, DType::f32, "X");
  te::Tensor Y = te::compute(
      {6, 37}, [&](te::Var i, te::Var j) { return X(i, j) * 2.0f + 1.0f; }, "Y");
  te::Schedule s = te::create_schedule({Y});
  auto [jo, ji] = s[Y].split(Y.axis(1), 16);
  s[Y].vectorize(ji).parallel(Y.axis(0));
  absl::StatusOr<te::PrimFunc> f = te::lower(s, {X, Y}, name);
  REQUIRE(f.ok());
  return *f;
}

fs::path temp_dir() {
  fs::path dir = fs::temp_directory_path() / ("collage_codegen_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir;
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

uint16_t elf_u16(const std::string& elf, size_t offset) {
  return static_cast<uint16_t>(static_cast<uint8_t>(elf[offset]) |
                               (static_cast<uint8_t>(elf[offset + 1]) << 8));
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string p = path;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    if (access((p.substr(start, end - start) + "/" + program).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

TEST_CASE("a host object links into a shared library whose kernels run", "[codegen][object]") {
  fs::path dir = temp_dir();
  absl::StatusOr<std::string> obj = codegen::emit_object(
      {sample_kernel("scale"), sample_kernel("scale2")}, codegen::TargetSpec::host());
  REQUIRE(obj.ok());
  REQUIRE(obj->compare(0, 4,
                       "\x7f"
                       "ELF") == 0);
  write_file(dir / "k.o", *obj);
  absl::Status linked = codegen::link_shared_library(
      {(dir / "k.o").string()}, (dir / "libk.so").string(), codegen::TargetSpec::host());
  INFO(linked.message());
  REQUIRE(linked.ok());
  void* lib = dlopen((dir / "libk.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lib != nullptr);
  auto fn = reinterpret_cast<codegen::KernelFn>(dlsym(lib, "scale2"));
  REQUIRE(fn != nullptr);
  std::vector<float> x = testing::random_floats(6 * 37, 11), y(6 * 37);
  std::vector<void*> args = {x.data(), y.data()};
  for (int t = 0; t < 4; ++t) fn(args.data(), t, 4);
  for (size_t i = 0; i < x.size(); ++i) REQUIRE(y[i] == x[i] * 2.0f + 1.0f);
  dlclose(lib);
  fs::remove_all(dir);
}

TEST_CASE("an aarch64 object and shared library", "[codegen][object]") {
  codegen::TargetSpec arm = codegen::TargetSpec::aarch64_linux();
  CHECK(arm.vector_bytes() == 16);
  absl::StatusOr<std::string> obj = codegen::emit_object({sample_kernel("scale")}, arm);
  REQUIRE(obj.ok());
  REQUIRE(obj->compare(0, 4,
                       "\x7f"
                       "ELF") == 0);
  CHECK(elf_u16(*obj, 16) == 1);    // ET_REL
  CHECK(elf_u16(*obj, 18) == 183);  // EM_AARCH64
  absl::StatusOr<std::string> text = codegen::emit_assembly({sample_kernel("scale")}, arm);
  REQUIRE(text.ok());
  CHECK(text->find(".4s") != std::string::npos);  // NEON 4 x f32 vectors
  // scripts/install-deps installs lld-16; a missing linker is an incomplete install.
  const std::string linker = codegen::default_cross_linker();
  INFO("cross linker: " << linker);
  REQUIRE((linker.find('/') != std::string::npos ? access(linker.c_str(), X_OK) == 0
                                                 : on_path(linker)));
  fs::path dir = temp_dir();
  write_file(dir / "arm.o", *obj);
  absl::Status linked =
      codegen::link_shared_library({(dir / "arm.o").string()}, (dir / "libarm.so").string(), arm);
  INFO(linked.message());
  REQUIRE(linked.ok());
  std::string so = read_file(dir / "libarm.so");
  CHECK(elf_u16(so, 16) == 3);  // ET_DYN
  CHECK(elf_u16(so, 18) == 183);
  fs::remove_all(dir);
}

TEST_CASE("vectorized loops use the host's widest vector registers", "[codegen][object]") {
  codegen::TargetSpec host = codegen::TargetSpec::host();
  absl::StatusOr<std::string> text = codegen::emit_assembly({sample_kernel("scale")}, host);
  REQUIRE(text.ok());
  if (host.vector_bytes() == 64) {
    CHECK(text->find("zmm") != std::string::npos);
  } else if (host.vector_bytes() == 32) {
    CHECK(text->find("ymm") != std::string::npos);
  }
  absl::StatusOr<std::string> ir = codegen::emit_llvm_ir({sample_kernel("scale")}, host);
  REQUIRE(ir.ok());
  CHECK(ir->find("define void @scale(ptr") != std::string::npos);
  CHECK(ir->find("<16 x float>") != std::string::npos);
}

TEST_CASE("loops around a register tile's innermost loop stay loops", "[codegen][object]") {
  // C[4, 8] = A[4, 32] x B[32, 8] as one register tile: the 4 rows unrolled, the 8 columns one
  // vector, the reduction around them in 4 steps of 8. LLVM may unroll the inner 8 (32 vector
  // multiplies); unrolling the reduction whole (128) hoisted every B row out of enclosing loops.
  te::Tensor A = te::placeholder({4, 32}, DType::f32, "A");
  te::Tensor B = te::placeholder({32, 8}, DType::f32, "B");
  te::IterVar k = te::reduce_axis({0, 32}, "k");
  te::Tensor C = te::compute(
      {4, 8}, [&](te::Var i, te::Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
  te::Schedule s = te::create_schedule({C});
  auto [ko, ki] = s[C].split(k, 8);
  s[C].reorder({ko, ki, C.axis(0), C.axis(1)});
  s[C].unroll(C.axis(0)).vectorize(C.axis(1));
  absl::StatusOr<te::PrimFunc> f = te::lower(s, {A, B, C}, "tile");
  REQUIRE(f.ok());
  absl::StatusOr<std::string> ir = codegen::emit_llvm_ir({*f}, codegen::TargetSpec::host());
  REQUIRE(ir.ok());
  INFO(*ir);
  CHECK(ir->find("llvm.loop.unroll.disable") != std::string::npos);
  size_t vector_multiplies = 0;
  for (size_t at = ir->find("fmul contract <8 x float>"); at != std::string::npos;
       at = ir->find("fmul contract <8 x float>", at + 1))
    ++vector_multiplies;
  CHECK(vector_multiplies >= 4);
  CHECK(vector_multiplies <= 32);
}

TEST_CASE("a failing link reports the linker's diagnostics", "[codegen][object]") {
  absl::Status s = codegen::link_shared_library({"/nonexistent/collage.o"}, "/nonexistent/libx.so",
                                                codegen::TargetSpec::host());
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()).find("linker 'cc' failed") != std::string::npos);
  absl::Status missing = codegen::link_shared_library({"x.o"}, "x.so", codegen::TargetSpec::host(),
                                                      {.linker = "collage-no-such-linker"});
  CHECK(missing.code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("code generator errors", "[codegen][object]") {
  te::Buffer B("B", DType::f32, {16});
  te::Var i("i"), j("j");
  auto compile_error = [](const te::PrimFunc& f) {
    absl::StatusOr<std::unique_ptr<codegen::JitModule>> m = codegen::JitModule::compile({f});
    REQUIRE_FALSE(m.ok());
    return std::string(m.status().message());
  };
  SECTION("GPU-bound loop") {
    te::Tensor X = te::placeholder({64}, DType::f32, "X");
    te::Tensor Y = te::compute(
        {64}, [&](te::Var v) { return X(v) + 1.0f; }, "Y");
    te::Schedule s = te::create_schedule({Y});
    auto [bx, tx] = s[Y].split(Y.axis(0), 32);
    s[Y].bind(bx, "blockIdx.x").bind(tx, "threadIdx.x");
    absl::StatusOr<te::PrimFunc> f = te::lower(s, {X, Y}, "gpu");
    REQUIRE(f.ok());
    CHECK(compile_error(*f) ==
          "kernel 'gpu': loop 'i0.outer' is bound to blockIdx.x; the CPU code generator cannot run "
          "GPU-bound loops");
  }
  SECTION("two parallel loops") {
    te::Stmt st = te::make_store(B, {i}, te::Expr(1.0f));
    te::PrimFunc f{"two",
                   {B},
                   te::make_seq({te::make_for(i, 0, 8, te::ForKind::parallel, st),
                                 te::make_for(i, 8, 8, te::ForKind::parallel, st)})};
    CHECK(compile_error(f) ==
          "kernel 'two' has 2 parallel loops; a kernel splits exactly one loop into tasks");
  }
  SECTION("parallel loop that is not the outermost statement") {
    te::PrimFunc f{"inner",
                   {B},
                   te::make_seq({te::make_store(B, {0}, te::Expr(0.0f)),
                                 te::make_for(i, 1, 15, te::ForKind::parallel,
                                              te::make_store(B, {i}, te::Expr(1.0f)))})};
    CHECK(compile_error(f).find(
              "kernel 'inner': parallel loop 'i' must be the outermost statement") == 0);
  }
  SECTION("nested vectorized loops") {
    te::PrimFunc f{"nested",
                   {B},
                   te::make_for(i, 0, 4, te::ForKind::vectorized,
                                te::make_for(j, 0, 4, te::ForKind::vectorized,
                                             te::make_store(B, {i * 4 + j}, te::Expr(1.0f))))};
    CHECK(compile_error(f) ==
          "kernel 'nested': vectorized loop 'j' is nested in vectorized loop 'i'");
  }
  SECTION("lane-varying value stored to one element") {
    te::PrimFunc f{"racy",
                   {B},
                   te::make_for(i, 0, 4, te::ForKind::vectorized,
                                te::make_store(B, {0}, te::cast(DType::f32, i)))};
    CHECK(compile_error(f).find(
              "stores a value that differs across lanes to one element of buffer 'B'") !=
          std::string::npos);
  }
  SECTION("invalid loop IR") {
    te::PrimFunc f{"unbound", {B}, te::make_store(B, {j}, te::Expr(1.0f))};
    CHECK(compile_error(f) ==
          "function 'unbound' uses variable 'j' outside the loop or let that binds it");
  }
  SECTION("duplicate kernel names") {
    absl::StatusOr<std::unique_ptr<codegen::JitModule>> m =
        codegen::JitModule::compile({sample_kernel("k"), sample_kernel("k")});
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().message() == "kernel 'k' is defined twice");
  }
  SECTION("JIT for another machine") {
    codegen::JitOptions o;
    o.target = codegen::TargetSpec::aarch64_linux();
    absl::StatusOr<std::unique_ptr<codegen::JitModule>> m =
        codegen::JitModule::compile({sample_kernel("k")}, o);
    REQUIRE_FALSE(m.ok());
    CHECK(std::string(m.status().message()).find("is not the host's") != std::string::npos);
  }
}
