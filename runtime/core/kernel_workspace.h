// The scratch memory of generated kernels: buffers too large for a task's stack (the packed rows
// of a convolution, Winograd tiles) come from a per-thread cache that keeps them from one run to
// the next, as TVM's workspace pool does. With plain malloc/free every task of every run mapped
// fresh pages: DenseNet-121 in the compiler's process took 8,000 page faults per run (70 ms
// against 40 ms for the same kernels in a process whose heap happened to keep them).
//
// Generated code calls its allocator through two pointer variables it defines itself (weak, so
// the objects of one library share them), initialised to malloc and free; whoever loads the code
// (the JIT, the runtime's loader of an artifact's native code) points them here. Code whose
// variables were never set still runs, on malloc.
#pragma once

#include <cstdint>

namespace collage::rt {

// The names of the pointer variables in generated code: void* (*)(int64_t) and void (*)(void*).
inline constexpr char kWorkspaceAllocHook[] = "collage_workspace_alloc_hook";
inline constexpr char kWorkspaceFreeHook[] = "collage_workspace_free_hook";

// A buffer of at least `bytes` bytes, 64-byte aligned, owned by the calling thread's cache until
// workspace_free; null when memory is exhausted. Buffers are reused once freed, smallest fit
// first; a thread keeps what its deepest nesting needed until it exits (buffers above 64 MiB are
// given back when freed).
void* workspace_alloc(int64_t bytes);
// Returns `p` (from workspace_alloc on this thread, or from malloc) to the cache; null is ignored.
void workspace_free(void* p);

// Points the hooks of loaded generated code at the functions above. `alloc_hook` and
// `free_hook` are the addresses of its two variables (either may be null: code without large
// buffers does not define them).
void install_workspace_hooks(void* alloc_hook, void* free_hook);

// How many buffers the calling thread's cache has taken from the system so far (for tests).
int64_t workspace_system_allocations();

}  // namespace collage::rt
