// workspace_alloc / workspace_free: a per-thread list of buffers, each free or lent out.
#include "kernel_workspace.h"

#include <cstdlib>
#include <vector>

namespace collage::rt {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kMaxKeptBytes = size_t{64} << 20;

struct Buffer {
  void* data = nullptr;
  size_t capacity = 0;
  bool lent = false;
};

struct Cache {
  std::vector<Buffer> buffers;
  int64_t system_allocations = 0;
  ~Cache() {
    for (Buffer& b : buffers) std::free(b.data);
  }
};

thread_local Cache cache;

}  // namespace

void* workspace_alloc(int64_t bytes) {
  const size_t want = (static_cast<size_t>(bytes > 0 ? bytes : 1) + kAlign - 1) / kAlign * kAlign;
  Buffer* fit = nullptr;    // the smallest free buffer that holds `want`
  Buffer* spare = nullptr;  // else a free buffer too small, replaced by a larger one
  for (Buffer& b : cache.buffers) {
    if (b.lent) continue;
    if (b.capacity >= want) {
      if (!fit || b.capacity < fit->capacity) fit = &b;
    } else if (!spare) {
      spare = &b;
    }
  }
  if (fit) {
    fit->lent = true;
    return fit->data;
  }
  void* data = std::aligned_alloc(kAlign, want);
  if (!data) return nullptr;
  ++cache.system_allocations;
  if (spare) {
    std::free(spare->data);
    *spare = {data, want, true};
  } else {
    cache.buffers.push_back({data, want, true});
  }
  return data;
}

void workspace_free(void* p) {
  if (!p) return;
  for (size_t i = 0; i < cache.buffers.size(); ++i) {
    Buffer& b = cache.buffers[i];
    if (b.data != p) continue;
    if (b.capacity > kMaxKeptBytes) {
      std::free(b.data);
      cache.buffers.erase(cache.buffers.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      b.lent = false;
    }
    return;
  }
  std::free(p);  // allocated before the hooks were installed
}

void install_workspace_hooks(void* alloc_hook, void* free_hook) {
  using AllocFn = void* (*)(int64_t);
  using FreeFn = void (*)(void*);
  // Both or neither: a buffer from one allocator must go back to the same one.
  if (!alloc_hook || !free_hook) return;
  *static_cast<AllocFn*>(alloc_hook) = &workspace_alloc;
  *static_cast<FreeFn*>(free_hook) = &workspace_free;
}

int64_t workspace_system_allocations() {
  return cache.system_allocations;
}

}  // namespace collage::rt
