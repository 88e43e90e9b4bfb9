// A standalone driver of the ONNX importer fuzz target for builds without libFuzzer (GCC, the
// ctest suite): replays the given inputs, then runs mutated copies of them (the same structure-
// aware mutator, with a simple byte-level one in place of libFuzzer's) for a bounded time. Any
// input that runs longer than --hang seconds is reported as a hang and fails the run. With
// --make-seeds it writes fuzzing seeds instead: real models with their large initializers
// replaced (fuzz/onnx_seeds.h).
//
//   onnx_fuzz_replay [--seconds S] [--seed N] [--hang S] [--keep-current FILE] [--why N]
//                    [--shrink PATH]... [--seed-cache DIR] PATH...
//     PATH: a file, or a folder searched for *.onnx (and, in folders named regressions*, files
//     without an extension); --shrink PATH: the same, with the models' large initializers
//     replaced as in the seeds (real models as inputs), kept in DIR with --seed-cache and made
//     again only when older than their model; --keep-current FILE: each input is written
//     to FILE before it runs, so that a crash leaves the input that caused it; --why N: prints
//     the N most frequent errors that stopped inputs (what keeps mutations from going deeper)
//   onnx_fuzz_replay --make-seeds OUT_DIR PATH...   (seed-NAME.onnx for each model found, made
//     again only when older than the model)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "onnx_fuzz_target.h"
#include "onnx_mutator.h"
#include "onnx_seeds.h"

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed);
extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1,
                                            const uint8_t* data2, size_t size2, uint8_t* out,
                                            size_t max_out_size, unsigned int seed);

namespace {

namespace fs = std::filesystem;
using collage::fuzz::Rng;

constexpr size_t kMaxInput = size_t{1} << 20;
// Initializers larger than this become ConstantOfShape nodes in seeds.
constexpr size_t kSeedInitializerBytes = 4096;
thread_local Rng byte_rng(1);

// Seeds and findings: files given by name, files named *.onnx in the given folders, and files
// without an extension in folders named regressions*.
std::vector<fs::path> input_files(const std::vector<std::string>& paths) {
  std::vector<fs::path> all;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      if (fs::is_regular_file(path, ec)) all.emplace_back(path);
      continue;
    }
    const bool regressions = fs::path(path).filename().string().starts_with("regressions");
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(path, ec))
      if (e.is_regular_file() &&
          (e.path().extension() == ".onnx" || (regressions && !e.path().has_extension())))
        files.push_back(e.path());
    std::sort(files.begin(), files.end());
    all.insert(all.end(), files.begin(), files.end());
  }
  return all;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A model with its large initializers replaced (fuzz/onnx_seeds.h); empty when `bytes` is no
// model or too large even so.
std::string shrunk(const std::string& bytes) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) return {};
  collage::fuzz::shrink_initializers(model, kSeedInitializerBytes);
  std::string out;
  model.SerializeToString(&out);
  return out.size() <= kMaxInput ? out : std::string();
}

// The shrunk copy of the model at `f`: read from `cache`/seed-NAME when that file is newer than
// the model, made (and written there) otherwise, so that the model cache's gigabytes are read once
// and not on every run. Without a cache folder it is made every time. Empty as shrunk() is.
std::string shrunk_cached(const fs::path& f, const fs::path& cache) {
  const fs::path seed = cache.empty() ? fs::path() : cache / ("seed-" + f.filename().string());
  std::error_code seed_ec, model_ec;
  if (!seed.empty()) {
    const auto seed_time = fs::last_write_time(seed, seed_ec);
    if (!seed_ec && seed_time > fs::last_write_time(f, model_ec) && !model_ec)
      return read_file(seed);
  }
  std::string bytes = shrunk(read_file(f));
  if (!seed.empty() && !bytes.empty()) {
    fs::create_directories(cache, seed_ec);
    std::ofstream(seed, std::ios::binary) << bytes;
  }
  return bytes;
}

void collect(const std::vector<std::string>& paths, bool shrink, const fs::path& cache,
             std::vector<std::string>& inputs) {
  for (const fs::path& f : input_files(paths)) {
    std::string bytes = shrink ? shrunk_cached(f, cache) : read_file(f);
    if (!bytes.empty() && bytes.size() <= kMaxInput) inputs.push_back(std::move(bytes));
  }
}

void on_alarm(int) {
  static const char kMessage[] = "onnx_fuzz_replay: an input ran past the hang limit\n";
  (void)!write(2, kMessage, sizeof kMessage - 1);
  _exit(1);
}

int make_seeds(const fs::path& out, const std::vector<std::string>& paths) {
  fs::create_directories(out);
  int written = 0;
  for (const fs::path& f : input_files(paths)) {
    const std::string bytes = shrunk_cached(f, out);
    if (bytes.empty()) {
      std::fprintf(stderr, "onnx_fuzz_replay: %s is no ONNX model, or too large even shrunk; "
                   "skipped\n", f.c_str());
      continue;
    }
    ++written;
  }
  std::printf("%d seeds in %s (made again where older than their model)\n", written,
              out.c_str());
  return 0;
}

}  // namespace

// The byte-level mutator libFuzzer would provide: flip, overwrite, insert or erase bytes.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size) {
  auto below = [](size_t n) { return n ? static_cast<size_t>(byte_rng() % n) : 0; };
  switch (byte_rng() % 4) {
    case 0:
      if (size) data[below(size)] ^= static_cast<uint8_t>(1u << below(8));
      break;
    case 1:
      if (size) data[below(size)] = static_cast<uint8_t>(byte_rng());
      break;
    case 2:
      if (size < max_size) {
        const size_t at = below(size + 1);
        std::memmove(data + at + 1, data + at, size - at);
        data[at] = static_cast<uint8_t>(byte_rng());
        ++size;
      }
      break;
    default:
      if (size) {
        const size_t at = below(size), n = 1 + below(std::min<size_t>(size - at, 16));
        std::memmove(data + at, data + at + n, size - at - n);
        size -= n;
      }
  }
  return size;
}

int main(int argc, char** argv) {
  double seconds = 10;
  unsigned long seed = 1;
  unsigned hang = 20;
  size_t why_top = 0;
  std::string seeds_out;
  fs::path seed_cache;  // where --shrink keeps the shrunk models between runs
  std::vector<std::string> paths, shrink_paths;
  std::string keep_current;  // each input is written here before it runs (a crash leaves it)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--seconds" && has_value) seconds = std::stod(argv[++i]);
    else if (a == "--seed" && has_value) seed = std::stoul(argv[++i]);
    else if (a == "--hang" && has_value) hang = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (a == "--make-seeds" && has_value) seeds_out = argv[++i];
    else if (a == "--shrink" && has_value) shrink_paths.push_back(argv[++i]);
    else if (a == "--seed-cache" && has_value) seed_cache = argv[++i];
    else if (a == "--keep-current" && has_value) keep_current = argv[++i];
    else if (a == "--why" && has_value) why_top = std::stoul(argv[++i]);
    else paths.push_back(a);
  }
  if (!seeds_out.empty()) return make_seeds(seeds_out, paths);
  std::vector<std::string> inputs;
  collect(paths, /*shrink=*/false, {}, inputs);
  collect(shrink_paths, /*shrink=*/true, seed_cache, inputs);
  if (inputs.empty()) {
    std::fprintf(stderr, "onnx_fuzz_replay: no inputs found in the given paths\n");
    return 2;
  }
  std::signal(SIGALRM, on_alarm);
  long reached[4] = {};  // by collage::fuzz::Reached
  std::map<std::string, long> stopped_by;  // error message (its first line) -> inputs
  auto run = [&](const std::string& bytes) {
    if (!keep_current.empty()) std::ofstream(keep_current, std::ios::binary) << bytes;
    std::string why;
    alarm(hang);
    const auto r = collage::fuzz::run_onnx_input(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                 bytes.size(), why_top ? &why : nullptr);
    alarm(0);
    ++reached[static_cast<int>(r)];
    if (!why.empty()) ++stopped_by[why.substr(0, why.find('\n'))];
  };
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& in : inputs) run(in);
  Rng rng(seed);
  byte_rng.seed(seed + 1);
  long executions = static_cast<long>(inputs.size());
  std::vector<uint8_t> buffer(kMaxInput);
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (elapsed() < seconds) {
    const std::string& base = inputs[rng() % inputs.size()];
    std::memcpy(buffer.data(), base.data(), base.size());
    size_t size = base.size();
    if (rng() % 8 == 0) {
      const std::string& other = inputs[rng() % inputs.size()];
      const size_t n = LLVMFuzzerCustomCrossOver(
          reinterpret_cast<const uint8_t*>(base.data()), base.size(),
          reinterpret_cast<const uint8_t*>(other.data()), other.size(), buffer.data(),
          buffer.size(), static_cast<unsigned>(rng()));
      if (n) size = n;
    }
    for (int k = 1 + static_cast<int>(rng() % 4); k > 0; --k)
      size = LLVMFuzzerCustomMutator(buffer.data(), size, buffer.size(),
                                     static_cast<unsigned>(rng()));
    run(std::string(reinterpret_cast<const char*>(buffer.data()), size));
    ++executions;
  }
  std::printf("onnx_fuzz_replay: %ld executions (%zu inputs replayed) in %.1f s, no finding; "
              "refused %ld, imported %ld (passes failed), too large to run %ld, run by the "
              "reference executor %ld\n",
              executions, inputs.size(), elapsed(), reached[0], reached[1], reached[2],
              reached[3]);
  std::vector<std::pair<long, std::string>> top;
  for (const auto& [message, n] : stopped_by) top.emplace_back(n, message);
  std::sort(top.rbegin(), top.rend());
  if (top.size() > why_top) top.resize(why_top);
  for (const auto& [n, message] : top) std::printf("%8ld  %s\n", n, message.c_str());
  return 0;
}
