// GPU programs without a GPU: the binary form round-trips and every damaged form is refused with
// a message naming what and where; check_program() refuses offsets and shapes a program cannot
// run; the module's entry points refuse what they cannot run instead of crashing.
#include <catch2/catch.hpp>

#include "cuda_driver.h"
#include "cuda_module.h"
#include "cuda_program.h"
#include "program_desc.h"

namespace collage::rt_cuda {
namespace {

GpuProgram sample_program() {
  GpuProgram p;
  p.arena_bytes = 64 * 1024;
  p.arg_offsets = {0, 4096};
  p.constant_offsets = {8192};
  p.images = {{0x7f, 'E', 'L', 'F', 1, 2, 3}};
  LaunchStep l;
  l.function = "k0";
  l.grid = {4, 2, 1};
  l.block = {128, 1, 1};
  l.args = {0, 8192, 4096};
  GemmStep g;
  g.trans_b = true;
  g.m = 8, g.n = 16, g.k = 32, g.batch = 2;
  g.lda = 32, g.ldb = 32, g.ldc = 16;
  g.stride_a = 256, g.stride_b = 512, g.stride_c = 128;
  g.alpha = 0.5f, g.beta = 1.0f;
  g.a = 0, g.b = 8192, g.c = 4096;
  ConvStep c;
  c.c = 4, c.h = 8, c.w = 8, c.o = 4, c.kh = 3, c.kw = 3, c.pad_h = 1, c.pad_w = 1, c.groups = 2;
  c.has_bias = true;
  c.activation = ConvActivation::relu;
  c.x = 0, c.weight = 8192, c.bias = 12288, c.y = 4096;
  p.steps = {l, g, c};
  p.use_graph = false;
  return p;
}

const std::vector<uint64_t> kArgBytes = {1024, 1024};
const std::vector<uint64_t> kConstantBytes = {2048};

std::string decode_error(const std::vector<uint8_t>& bytes) {
  GpuProgram out;
  return decode_program(bytes.data(), bytes.size(), &out);
}

TEST_CASE("a GPU program round-trips through its binary form", "[rt_cuda]") {
  const GpuProgram p = sample_program();
  const std::vector<uint8_t> bytes = encode_program(p);
  GpuProgram q;
  REQUIRE(decode_program(bytes.data(), bytes.size(), &q).empty());
  CHECK(encode_program(q) == bytes);
  CHECK(q.arena_bytes == p.arena_bytes);
  CHECK(q.images == p.images);
  CHECK_FALSE(q.use_graph);
  REQUIRE(q.steps.size() == 3);
  const auto& l = std::get<LaunchStep>(q.steps[0]);
  CHECK(l.function == "k0");
  CHECK(l.grid == std::array<uint32_t, 3>{4, 2, 1});
  CHECK(l.args == std::vector<uint64_t>{0, 8192, 4096});
  const auto& g = std::get<GemmStep>(q.steps[1]);
  CHECK((g.trans_b && !g.trans_a && g.batch == 2 && g.stride_b == 512 && g.alpha == 0.5f));
  const auto& c = std::get<ConvStep>(q.steps[2]);
  CHECK((c.groups == 2 && c.has_bias && c.activation == ConvActivation::relu && c.bias == 12288));
  CHECK(check_program(q, kArgBytes, kConstantBytes).empty());
}

TEST_CASE("every truncation of a GPU program is refused", "[rt_cuda]") {
  const std::vector<uint8_t> bytes = encode_program(sample_program());
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::string e = decode_error({bytes.begin(), bytes.begin() + n});
    INFO(n << " bytes: " << e);
    CHECK(e.find("truncated") != std::string::npos);
  }
}

TEST_CASE("damaged GPU programs are refused with what is wrong", "[rt_cuda]") {
  const std::vector<uint8_t> good = encode_program(sample_program());
  auto damaged = [&](size_t at, uint8_t value) {
    std::vector<uint8_t> b = good;
    b[at] = value;
    return decode_error(b);
  };
  CHECK(damaged(0, 'X').find("not a GPU program") != std::string::npos);
  CHECK(damaged(4, 9).find("format version 9") != std::string::npos);
  std::vector<uint8_t> trailing = good;
  trailing.push_back(0);
  CHECK(decode_error(trailing).find("trailing bytes") != std::string::npos);
  // The use_graph flag is the last byte.
  CHECK(damaged(good.size() - 1, 2).find("neither 0 nor 1") != std::string::npos);
  // A step tag and an activation out of range: find them from a program of one step each.
  GpuProgram one = sample_program();
  one.steps = {std::get<ConvStep>(sample_program().steps[2])};
  std::vector<uint8_t> conv = encode_program(one);
  const size_t tag_at = conv.size() - 1 - 4 * 8 - 2 - 14 * 8 - 1;
  REQUIRE(conv[tag_at] == 2);
  std::vector<uint8_t> b = conv;
  b[tag_at] = 7;
  CHECK(decode_error(b).find("step kind 7 is unknown") != std::string::npos);
  b = conv;
  b[conv.size() - 1 - 4 * 8 - 1] = 5;
  CHECK(decode_error(b).find("activation 5 is unknown") != std::string::npos);
  // A huge count is refused before anything is allocated.
  b = good;
  for (size_t i = 16; i < 20; ++i) b[i] = 0xff;  // the argument offset count
  CHECK(decode_error(b).find("count") != std::string::npos);
}

TEST_CASE("check_program refuses offsets and shapes the program cannot run", "[rt_cuda]") {
  auto error_of = [](const std::function<void(GpuProgram&)>& change) {
    GpuProgram p = sample_program();
    change(p);
    return check_program(p, kArgBytes, kConstantBytes);
  };
  CHECK(error_of([](GpuProgram& p) { p.arg_offsets[1] = 100; }).find("not aligned") !=
        std::string::npos);
  CHECK(error_of([](GpuProgram& p) {
          p.arg_offsets[1] = 64 * 1024;
        }).find("argument 1 (1024 bytes at offset 65536) does not fit the arena") !=
        std::string::npos);
  CHECK(error_of([](GpuProgram& p) { p.arg_offsets.pop_back(); }).find("places 1 arguments") !=
        std::string::npos);
  CHECK(error_of([](GpuProgram& p) { p.steps.clear(); }).find("no steps") != std::string::npos);
  CHECK(error_of([](GpuProgram& p) {
          std::get<LaunchStep>(p.steps[0]).image = 1;
        }).find("names cubin 1 of 1") != std::string::npos);
  CHECK(error_of([](GpuProgram& p) {
          std::get<LaunchStep>(p.steps[0]).block = {64, 32, 1};
        }).find("2048 threads per block") != std::string::npos);
  CHECK(error_of([](GpuProgram& p) {
          std::get<LaunchStep>(p.steps[0]).grid[1] = 0;
        }).find("empty grid") != std::string::npos);
  CHECK(error_of([](GpuProgram& p) {
          std::get<GemmStep>(p.steps[1]).ldc = 8;
        }).find("C row stride 8 is below its 16 columns") != std::string::npos);
  CHECK(error_of([](GpuProgram& p) {
          std::get<GemmStep>(p.steps[1]).k = 0;
        }).find("not positive") != std::string::npos);
  CHECK(error_of([](GpuProgram& p) {
          std::get<GemmStep>(p.steps[1]).stride_a = int64_t{1} << 62;
        }).find("step 1 (GEMM) A") != std::string::npos);
  CHECK(error_of([](GpuProgram& p) {
          std::get<GemmStep>(p.steps[1]).batch = 200;
        }).find("does not fit the arena") != std::string::npos);
  CHECK(error_of([](GpuProgram& p) {
          std::get<ConvStep>(p.steps[2]).groups = 3;
        }).find("not divisible by 3 groups") != std::string::npos);
  CHECK(error_of([](GpuProgram& p) {
          std::get<ConvStep>(p.steps[2]).kh = 20;
        }).find("window is larger") != std::string::npos);
  CHECK(error_of([](GpuProgram& p) {
          std::get<ConvStep>(p.steps[2]).y = 65280;
        }).find("step 2 (convolution) output") != std::string::npos);
}

TEST_CASE("the cuda module refuses kernels it cannot run, naming why", "[rt_cuda]") {
  const collage_rt_module_v1_t* m = module_table();
  REQUIRE(m != nullptr);
  CHECK(std::string(m->name) == "cuda");
  CHECK(m->abi_version == COLLAGE_RT_MODULE_ABI_VERSION);
  const std::vector<uint8_t> params = encode_program(sample_program());
  const int64_t shape[] = {256};
  const collage_tensor_desc_t args[] = {{COLLAGE_DTYPE_F32, 1, shape},
                                        {COLLAGE_DTYPE_F32, 1, shape}};
  const int64_t cshape[] = {512};
  const collage_tensor_desc_t cdesc[] = {{COLLAGE_DTYPE_F32, 1, cshape}};
  std::vector<float> weights(512);
  const void* constants[] = {weights.data()};
  const collage_kernel_desc_t desc =
      testing::gpu_program_desc(params, args, 2, 1, cdesc, constants, 1);
  char err[512];
  void* kernel = nullptr;

  collage_kernel_desc_t other = desc;
  other.entry = "conv";
  CHECK(m->kernel_create(&other, &kernel, err, sizeof err) != 0);
  CHECK(std::string(err).find("unknown kernel entry 'conv'") != std::string::npos);

  std::vector<uint8_t> cut(params.begin(), params.begin() + params.size() / 2);
  other = desc;
  other.params = cut.data();
  other.params_size = cut.size();
  CHECK(m->kernel_create(&other, &kernel, err, sizeof err) != 0);
  CHECK(std::string(err).find("truncated") != std::string::npos);

  const collage_tensor_desc_t strings[] = {{COLLAGE_DTYPE_STRING, 1, shape}, args[1]};
  other = desc;
  other.args = strings;
  CHECK(m->kernel_create(&other, &kernel, err, sizeof err) != 0);
  CHECK(std::string(err).find("argument 0 has element type 13") != std::string::npos);

  std::string why;
  if (cuda_driver(&why) == nullptr) {
    // A valid program on a machine without a driver: the reason, not a crash.
    CHECK(m->kernel_create(&desc, &kernel, err, sizeof err) != 0);
    CHECK(std::string(err) == why);
    CHECK(kernel == nullptr);
  }
}

}  // namespace
}  // namespace collage::rt_cuda
