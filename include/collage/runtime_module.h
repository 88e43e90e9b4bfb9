/* The C interface between the runtime and a backend runtime module (native code, oneDNN, Eigen,
 * a user plugin). Each library backend ships its runtime part as its own shared library exporting
 * `collage_rt_module_v1_get`; the core runtime dlopens only the modules an artifact names.
 *
 * ABI rules: structs start with `struct_size` so fields can be appended; functions are only ever
 * added; no C++ exception crosses this boundary; every pointer's owner is stated.
 *
 * Errors, here and in the backend plugin ABI (backend_plugin.h): a function returning int32_t
 * returns 0 (COLLAGE_STATUS_OK) on success. On failure it returns a collage_status_code_t of
 * include/collage/runtime.h - COLLAGE_STATUS_INVALID_ARGUMENT for arguments or a group it refuses,
 * COLLAGE_STATUS_UNSUPPORTED for a kernel it cannot create, COLLAGE_STATUS_KERNEL_FAILED for a
 * run that failed, ... (any other nonzero value is read as the call's usual failure) - and writes
 * a NUL-terminated message into `err` (capacity `err_size`, always >= 1; cut to fit). collage
 * turns the pair into its own status (collage_status_t at the C API, absl::Status in the
 * compiler) with that code, naming the module or plugin and the kernel.
 * Why not collage_status_t objects: a module or plugin would have to allocate them with
 * libcollage_runtime's collage_status_create, so every module and plugin would link against the
 * runtime library, and a status would cross between libraries built apart (a plugin loaded by
 * the compiler, a module by a runtime of a later version). With the caller's buffer nothing is
 * allocated across the boundary and a module needs no symbol of its host. */
#ifndef COLLAGE_RUNTIME_MODULE_H_
#define COLLAGE_RUNTIME_MODULE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COLLAGE_RT_MODULE_ABI_VERSION 1

/* Element types, numbered as collage::DType. */
typedef enum {
  COLLAGE_DTYPE_F32 = 0,
  COLLAGE_DTYPE_F16 = 1,
  COLLAGE_DTYPE_BF16 = 2,
  COLLAGE_DTYPE_I8 = 3,
  COLLAGE_DTYPE_I32 = 4,
  COLLAGE_DTYPE_I64 = 5,
  COLLAGE_DTYPE_BOOL = 6,
  COLLAGE_DTYPE_F64 = 7,
  COLLAGE_DTYPE_I16 = 8,
  COLLAGE_DTYPE_U8 = 9,
  COLLAGE_DTYPE_U16 = 10,
  COLLAGE_DTYPE_U32 = 11,
  COLLAGE_DTYPE_U64 = 12,
  /* ONNX STRING: each element is a collage_string_t (below). Artifacts of format version 3. */
  COLLAGE_DTYPE_STRING = 13
} collage_dtype_t;

/* One element of a COLLAGE_DTYPE_STRING tensor: `size` bytes at `data` (any bytes; ONNX strings
 * are byte strings, UTF-8 by convention), not NUL-terminated. `data` may be NULL when `size` is
 * 0. Who owns the bytes is stated where such a tensor is passed: a caller's input tensor is
 * borrowed for the call; a kernel's string outputs point into memory the runtime gives it for
 * the run (collage_rt_bytes_fn); an artifact's string constants point into the loaded artifact. */
typedef struct {
  const char* data;
  uint64_t size;
} collage_string_t;

/* Bytes of one element of `dtype`; 0 for a value that is not a collage_dtype_t. The one table of
 * element sizes: the runtime core and every module ask it. */
static inline size_t collage_dtype_size(int32_t dtype) {
  switch (dtype) {
    case COLLAGE_DTYPE_F32:
    case COLLAGE_DTYPE_I32:
    case COLLAGE_DTYPE_U32:
      return 4;
    case COLLAGE_DTYPE_F16:
    case COLLAGE_DTYPE_BF16:
    case COLLAGE_DTYPE_I16:
    case COLLAGE_DTYPE_U16:
      return 2;
    case COLLAGE_DTYPE_I8:
    case COLLAGE_DTYPE_BOOL:
    case COLLAGE_DTYPE_U8:
      return 1;
    case COLLAGE_DTYPE_I64:
    case COLLAGE_DTYPE_F64:
    case COLLAGE_DTYPE_U64:
      return 8;
    case COLLAGE_DTYPE_STRING:
      return sizeof(collage_string_t);
    default:
      return 0;
  }
}

/* Type of a dense row-major tensor. `shape` is owned by whoever owns the descriptor. */
typedef struct {
  int32_t dtype; /* collage_dtype_t */
  int32_t rank;
  const int64_t* shape;
} collage_tensor_desc_t;

/* A tensor a kernel with data-dependent shapes reads (kernel_run_dynamic): its buffer and its
 * shape at run time, of the rank its descriptor has. Borrowed for the call. */
typedef struct {
  const void* data;
  const int64_t* shape;
} collage_rt_tensor_t;

/* The buffer of output `index` of such a kernel, asked once its shape is known (`shape`: the rank
 * of its descriptor). NULL when the runtime cannot give one: out of memory, or a shape that
 * contradicts a dimension the plan states. The buffer is the runtime's. */
typedef void* (*collage_rt_alloc_fn)(void* ctx, int32_t index, const int64_t* shape);

/* `size` bytes (any alignment) for the strings a kernel writes into its COLLAGE_DTYPE_STRING
 * outputs, owned by the runtime and valid as long as the run's values (for a graph output, until
 * the caller releases it). NULL when out of memory. */
typedef void* (*collage_rt_bytes_fn)(void* ctx, uint64_t size);

/* Everything a module needs to create one kernel instance. All pointers are borrowed for the
 * duration of the create call, except `constants[i]`, which stay valid until the kernel is
 * destroyed (they point into the loaded artifact). */
typedef struct {
  uint32_t struct_size;
  const char* entry;     /* kernel kind or symbol name, NUL-terminated */
  const uint8_t* params; /* module-specific serialized parameters */
  size_t params_size;
  int32_t num_args; /* inputs then outputs, as passed to run */
  const collage_tensor_desc_t* args;
  int32_t num_inputs; /* the first num_inputs args are inputs */
  int32_t num_constants;
  const collage_tensor_desc_t* constant_descs;
  const void* const* constants;
  /* ---- Appended later: present only where struct_size covers them (COLLAGE_KERNEL_DESC_HAS). */
  uint32_t flags; /* COLLAGE_KERNEL_CREATE_* bits */
  /* Optional (may be NULL): a buffer of notice_size bytes, owned by the caller, where the module
   * may write a NUL-terminated notice about a kernel it did create, for the user to read (e.g.
   * that a precompiled form did not fit this library and the kernel was compiled again). */
  char* notice;
  size_t notice_size;
} collage_kernel_desc_t;

/* The struct_size of a descriptor with the first version's fields only: the least a module
 * accepts. */
#define COLLAGE_KERNEL_DESC_V1_BASE_SIZE offsetof(collage_kernel_desc_t, flags)

/* Whether `desc` (a collage_kernel_desc_t*) has the appended field `field`. */
#define COLLAGE_KERNEL_DESC_HAS(desc, field) \
  ((desc)->struct_size >= offsetof(collage_kernel_desc_t, field) + sizeof((desc)->field))

/* A module that carries precompiled code built for a particular library version (OpenVINO's
 * exported blobs) refuses a kernel whose precompiled form this library cannot load, instead of
 * compiling it again from the model it also carries. */
#define COLLAGE_KERNEL_CREATE_NO_RECOMPILE 1u

/* A backend runtime module. Returned by `collage_rt_module_v1_get`; static storage, never freed.
 * Functions returning int32_t follow the error convention above; the message says what went
 * wrong (the runtime adds which kernel and module). */
typedef struct {
  uint32_t struct_size;
  uint32_t abi_version; /* COLLAGE_RT_MODULE_ABI_VERSION */
  const char* name;     /* e.g. "dnnl" */
  const char* version;  /* e.g. "dnnl-2.6.3/1" */
  /* Creates a kernel; *kernel receives an opaque instance owned by the caller (destroy it). */
  int32_t (*kernel_create)(const collage_kernel_desc_t* desc, void** kernel, char* err,
                           size_t err_size);
  /* Number of independent tasks (>= 1); tasks of one run may execute concurrently. */
  int32_t (*kernel_task_count)(void* kernel);
  /* Runs task `task_id` of `task_count` on `args` (num_args buffer pointers, inputs then
   * outputs). Thread-safe: one kernel instance may run on several threads at once. */
  int32_t (*kernel_run)(void* kernel, void* const* args, int32_t task_id, int32_t task_count,
                        char* err, size_t err_size);
  /* Releases a kernel; accepts NULL. */
  void (*kernel_destroy)(void* kernel);
  /* ---- Appended later: present only where struct_size covers them (COLLAGE_RT_MODULE_HAS). */
  /* Optional (may be NULL): kernel_run with the kernel's own thread team (a library's OpenMP
   * team) limited to at most `max_threads` threads, the calling thread included (>= 1; 1: the
   * calling thread alone). The wave executor runs such kernels side by side this way, each on one
   * of its workers, instead of one at a time with every worker idle; a module offers it when its
   * kernels run on a team of their own (the compiler then also profiles them pinned to one
   * thread, and may record that in the wave schedule). The first run with a limit may build the
   * kernel for it (oneDNN fixes a primitive's thread count when it creates it);
   * kernel_prepare_threads does that ahead of time. Thread-safe like kernel_run. */
  int32_t (*kernel_run_threads)(void* kernel, void* const* args, int32_t task_id,
                                int32_t task_count, int32_t max_threads, char* err,
                                size_t err_size);
  /* Optional (may be NULL): readies `kernel` to run with at most `max_threads` threads (>= 1), so
   * that the first kernel_run_threads with that limit does no extra work. Thread-safe. */
  int32_t (*kernel_prepare_threads)(void* kernel, int32_t max_threads, char* err,
                                    size_t err_size);
  /* Optional (may be NULL): runs, as a single task, a kernel whose output shapes depend on its
   * input values (NonZero, NonMaxSuppression, ... and what follows them): its descriptor's
   * dimensions are -1 where the plan does not know them. `inputs` come with their run-time
   * shapes; the kernel computes each output's shape, asks `alloc` (with `alloc_ctx`) for its
   * buffer and fills it. Thread-safe like kernel_run. */
  int32_t (*kernel_run_dynamic)(void* kernel, const collage_rt_tensor_t* inputs,
                                int32_t num_inputs, collage_rt_alloc_fn alloc, void* alloc_ctx,
                                char* err, size_t err_size);
  /* Optional (may be NULL): kernel_run_dynamic for a kernel that reads or writes
   * COLLAGE_DTYPE_STRING tensors (arrays of collage_string_t): the bytes of every string it
   * writes come from `bytes` (with `alloc_ctx`), never from the module's own memory, so they live
   * as long as the run's values. Runs as one task; output shapes as in kernel_run_dynamic (a
   * string kernel's outputs may have fixed shapes: `alloc` then returns the planned buffer). */
  int32_t (*kernel_run_strings)(void* kernel, const collage_rt_tensor_t* inputs,
                                int32_t num_inputs, collage_rt_alloc_fn alloc,
                                collage_rt_bytes_fn bytes, void* alloc_ctx, char* err,
                                size_t err_size);
} collage_rt_module_v1_t;

/* The struct_size of a table with the first version's fields only: the least a module gives. */
#define COLLAGE_RT_MODULE_V1_BASE_SIZE offsetof(collage_rt_module_v1_t, kernel_run_threads)

/* Whether `module` (a collage_rt_module_v1_t*) has the appended, optional function `field`. */
#define COLLAGE_RT_MODULE_HAS(module, field)                                           \
  ((module)->struct_size >= offsetof(collage_rt_module_v1_t, field) + sizeof(void*) && \
   (module)->field != NULL)

typedef const collage_rt_module_v1_t* (*collage_rt_module_v1_get_fn)(void);

/* Generated (native) kernels have this signature: the outermost parallel loop is split into
 * task_count contiguous chunks and task task_id runs its chunk. */
typedef void (*collage_native_kernel_fn)(void* const* args, int32_t task_id, int32_t task_count);

#ifdef __cplusplus
}
#endif

#endif /* COLLAGE_RUNTIME_MODULE_H_ */
