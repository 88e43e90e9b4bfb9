// libFuzzer target for the artifact loader: each input is taken as an artifact whose checksums
// are first recomputed (so that mutations reach the plan decoder and its checks rather than stop
// at a checksum), loaded through the runtime's C API, and run once on zero-filled tensors when
// it loads. Any crash, sanitizer report or leak is a bug: a damaged artifact must only ever give
// a status. Built and run by fuzz/run_fuzzer.sh.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "collage/runtime.h"
#include "crc32c.h"
#include "format.h"

namespace {

using namespace collage::artifact;

// Recomputes the section and header checksums of `file` where the layout allows it.
void fix_checksums(std::string& file) {
  if (file.size() < kHeaderBytes || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0) return;
  auto* p = reinterpret_cast<uint8_t*>(file.data());
  const uint32_t header_size = load_u32(p + header::header_size);
  const uint32_t count = load_u32(p + header::section_count);
  if (header_size > file.size() || count > kMaxSections ||
      kHeaderBytes + kSectionEntryBytes * count > header_size)
    return;
  for (uint32_t i = 0; i < count; ++i) {
    uint8_t* e = p + kHeaderBytes + kSectionEntryBytes * i;
    const uint64_t offset = load_u64(e + entry::offset), size = load_u64(e + entry::size);
    if (offset <= file.size() && size <= file.size() - offset)
      store_u32(e + entry::crc, crc32c(p + offset, size));
  }
  store_u32(p + header::header_crc, 0);
  store_u32(p + header::header_crc, crc32c(p, header_size));
}

void run_once(const collage_module_t* m) {
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<DLTensor> tensors[2];
  for (int io = 0; io < 2; ++io) {
    const int32_t n = io ? collage_module_num_outputs(m) : collage_module_num_inputs(m);
    for (int32_t i = 0; i < n; ++i) {
      collage_tensor_info_t info{};
      info.struct_size = sizeof info;
      collage_status_t* s =
          io ? collage_module_output_info(m, i, &info) : collage_module_input_info(m, i, &info);
      if (s || info.bytes > (64u << 20)) {  // skip huge tensors: memory, not a bug
        collage_status_free(s);
        return;
      }
      buffers.emplace_back(info.bytes + 1, 0);
      tensors[io].push_back({buffers.back().data(),
                             {kDLCPU, 0},
                             info.ndim,
                             info.dl_dtype,
                             const_cast<int64_t*>(info.shape),
                             nullptr,
                             0});
    }
  }
  collage_status_free(collage_module_run(m, tensors[0].data(),
                                         static_cast<int32_t>(tensors[0].size()), tensors[1].data(),
                                         static_cast<int32_t>(tensors[1].size())));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string file(reinterpret_cast<const char*>(data), size);
  fix_checksums(file);
  collage_load_options_t options;
  collage_load_options_init(&options);
  options.num_threads = 1;
  options.module_dir = std::getenv("COLLAGE_FUZZ_MODULE_DIR");
  collage_module_t* m = nullptr;
  collage_status_t* s = collage_module_load_memory(file.data(), file.size(), &options, &m);
  if (!s && m && collage_module_arena_bytes(m) <= (256u << 20)) run_once(m);
  collage_status_free(s);
  collage_module_release(m);
  return 0;
}
