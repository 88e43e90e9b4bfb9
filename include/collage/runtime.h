/* The collage runtime C API: load an artifact written by the compiler (`collage compile`,
 * collage_compile_*) and run it on DLPack tensors. Implemented by libcollage_runtime.so, which
 * depends on no part of the compiler; each library backend's kernels live in their own runtime
 * module (libcollage_rt_<name>.so), opened only when an artifact needs it.
 *
 * ABI rules: every object is opaque, with a create/load and a release function; release accepts
 * NULL. Every fallible call returns a collage_status_t*: NULL means success, anything else is an
 * error the caller reads and frees with collage_status_free. Structs passed in carry a leading
 * `struct_size` so fields can be appended; functions are only ever added. No C++ exception
 * crosses this boundary.
 *
 * Ownership: strings and arrays returned by a module (names, shapes) are owned by the module and
 * valid until it is released. Buffers the caller passes in (tensors, artifact bytes) stay the
 * caller's; the library never frees them.
 *
 * Thread safety: every function may be called from any thread. A loaded module can be run from
 * many threads at once (each run has its own intermediate buffers); it must not be released
 * while a call on it is in progress.
 *
 * Environment: the library never sets environment variables (setenv is not safe while other
 * threads of the host run). One matters to the host: the oneDNN module (libcollage_rt_dnnl) runs
 * on OpenMP (libgomp), whose idle workers spin by default for a while after every parallel
 * region, on the cores the runtime's own threads need next. libgomp reads OMP_WAIT_POLICY once,
 * when it is loaded (at start-up when the program links it, else when the first artifact with
 * oneDNN kernels is loaded), so a host that runs such artifacts and does not use OpenMP itself
 * should start with OMP_WAIT_POLICY=passive in its environment. README.md has the measured
 * effect. */
#ifndef COLLAGE_RUNTIME_H_
#define COLLAGE_RUNTIME_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#include "collage/runtime_module.h" /* collage_dtype_t */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(COLLAGE_BUILDING_LIBRARY)
#define COLLAGE_API __attribute__((visibility("default")))
#else
#define COLLAGE_API
#endif

/* On every function returning a collage_status_t*: ignoring the status leaks it and loses the
 * error, so compilers that can warn about an unused result do. */
#if defined(__GNUC__) || defined(__clang__)
#define COLLAGE_MUST_USE __attribute__((warn_unused_result))
#else
#define COLLAGE_MUST_USE
#endif

/* Incremented when a function's meaning changes incompatibly (never expected within 1). */
#define COLLAGE_RUNTIME_ABI_VERSION 1

/* The library's version, e.g. "0.1.0" (static storage). */
COLLAGE_API const char* collage_runtime_version(void);
/* COLLAGE_RUNTIME_ABI_VERSION of the library. */
COLLAGE_API uint32_t collage_runtime_abi_version(void);
/* The newest artifact format version this library reads; it reads every version from 1 on
 * (docs/artifact-format.md). */
COLLAGE_API uint32_t collage_artifact_format_version(void);

/* The DLPack type of a collage_dtype_t (bool is {kDLUInt, 8, 1}); {0, 0, 0} for an unknown one.
 * DLPack has no string type: a COLLAGE_DTYPE_STRING tensor (ONNX STRING, artifacts of format
 * version 3) is {kDLOpaqueHandle, 128, 1}, its data an array of collage_string_t (a pointer and
 * a length per element, include/collage/runtime_module.h). As an input, the array and the bytes
 * it points at are the caller's, borrowed for the call. A string output comes only from
 * collage_module_run_outputs (collage_module_run refuses a model with one, naming it): its
 * collage_string_t array and the bytes they point at are the library's, valid until
 * collage_outputs_release. */
COLLAGE_API DLDataType collage_dtype_to_dlpack(int32_t dtype);

/* ---- Status ---------------------------------------------------------------------------- */

typedef struct collage_status collage_status_t;

typedef enum {
  COLLAGE_STATUS_OK = 0,
  COLLAGE_STATUS_INVALID_ARGUMENT = 1, /* bad input: wrong tensor count, shape, dtype, NULL */
  COLLAGE_STATUS_NOT_FOUND = 2,        /* a missing file or runtime module */
  COLLAGE_STATUS_CORRUPT = 3,          /* an artifact failing a check: truncated, checksum, field */
  COLLAGE_STATUS_UNSUPPORTED = 4,      /* a valid artifact this library cannot run (version) */
  COLLAGE_STATUS_KERNEL_FAILED = 5,    /* a kernel reported an error while running */
  COLLAGE_STATUS_INTERNAL = 6,         /* out of memory, or an unexpected failure */
  COLLAGE_STATUS_IO = 7                /* reading or writing a file, loading a library */
} collage_status_code_t;

/* A new status (for plugins and wrappers that report through the same type); the caller owns
 * it. COLLAGE_STATUS_OK gives NULL. `message` is copied; NULL counts as "". */
COLLAGE_API COLLAGE_MUST_USE collage_status_t* collage_status_create(int32_t code,
                                                                     const char* message);
/* The code of `status`; COLLAGE_STATUS_OK for NULL. */
COLLAGE_API int32_t collage_status_code(const collage_status_t* status);
/* The message, naming the file, module, kernel or tensor at fault; "" for NULL. Owned by the
 * status. */
COLLAGE_API const char* collage_status_message(const collage_status_t* status);
/* Frees a status; accepts NULL. */
COLLAGE_API void collage_status_free(collage_status_t* status);

/* ---- Loading --------------------------------------------------------------------------- */

typedef struct collage_module collage_module_t;

/* collage_module_load_memory uses the caller's buffer in place instead of copying it: the buffer
 * must be 64-byte aligned and stay valid and unchanged until the module is released. */
#define COLLAGE_LOAD_BORROW_BUFFER 1u
/* The executor runs use; neither flag: the one the compiler measured faster (recorded in the
 * artifact's wave schedule; sequential when it has none). Both: COLLAGE_STATUS_INVALID_ARGUMENT.
 * WAVES on an artifact without a wave schedule: COLLAGE_STATUS_UNSUPPORTED. */
#define COLLAGE_LOAD_EXECUTOR_SEQUENTIAL 2u
#define COLLAGE_LOAD_EXECUTOR_WAVES 4u
/* A kernel whose precompiled form does not fit this machine's library (an OpenVINO region whose
 * exported blob another OpenVINO build wrote) fails the load (COLLAGE_STATUS_UNSUPPORTED) instead
 * of being compiled again from the model the artifact also carries (which
 * collage_module_load_notes then reports). */
#define COLLAGE_LOAD_NO_RECOMPILE 8u

typedef struct {
  uint32_t struct_size;   /* the bytes of this struct the caller has: collage_load_options_init
                             sets it; an older, smaller struct gets the defaults for the rest */
  int32_t num_threads;    /* threads a kernel's tasks spread over, caller included; 0: all cores */
  const char* module_dir; /* searched first for libcollage_rt_<name>.so; NULL: not used. After
                             it: the directory of libcollage_runtime.so, then the default
                             library search path. Borrowed for the duration of the load call. */
  uint32_t flags;         /* COLLAGE_LOAD_* bits */
} collage_load_options_t;

/* The size of the first version of collage_load_options_t (all four fields above). */
#define COLLAGE_LOAD_OPTIONS_V1_SIZE (offsetof(collage_load_options_t, flags) + sizeof(uint32_t))

/* Fills the first `size` bytes of `options` (the caller's sizeof: never more) with the defaults
 * and sets struct_size to min(size, the library's sizeof). Call it as collage_load_options_init,
 * which passes sizeof *options; a size below 4 (no room for struct_size) leaves it alone. */
COLLAGE_API void collage_load_options_init_size(collage_load_options_t* options, size_t size);
/* The first version's entry point, kept for programs built before the one above: it writes the
 * first version's fields only (COLLAGE_LOAD_OPTIONS_V1_SIZE bytes). */
COLLAGE_API void(collage_load_options_init)(collage_load_options_t* options);
#define collage_load_options_init(options) \
  collage_load_options_init_size((options), sizeof *(options))

/* Loads the artifact at `path` (memory-mapped; constants are used in place). Everything is
 * checked first: header, checksums of every section (embedded native code never runs if its
 * checksum fails), and every field of the plan. Then the runtime modules the artifact names are
 * opened and its kernels created. `options` may be NULL (defaults). On success *module receives
 * a module the caller owns (collage_module_release); on failure *module is set to NULL. */
COLLAGE_API COLLAGE_MUST_USE collage_status_t* collage_module_load_file(
    const char* path, const collage_load_options_t* options, collage_module_t** module);
/* The same from `size` bytes at `data`, which are copied unless COLLAGE_LOAD_BORROW_BUFFER is
 * set (then they must outlive the module). */
COLLAGE_API COLLAGE_MUST_USE collage_status_t* collage_module_load_memory(
    const void* data, size_t size, const collage_load_options_t* options,
    collage_module_t** module);
/* Releases a module and everything it owns; accepts NULL. */
COLLAGE_API void collage_module_release(collage_module_t* module);

/* ---- Inputs and outputs ---------------------------------------------------------------- */

/* Number of graph inputs / outputs; 0 for NULL. */
COLLAGE_API int32_t collage_module_num_inputs(const collage_module_t* module);
COLLAGE_API int32_t collage_module_num_outputs(const collage_module_t* module);

typedef struct {
  uint32_t struct_size; /* set by the caller: sizeof(collage_tensor_info_t) */
  const char* name;     /* the graph's name for the value; owned by the module */
  int32_t dtype;        /* collage_dtype_t */
  DLDataType dl_dtype;  /* the same as DLPack: bool is {kDLUInt, 8, 1} */
  int32_t ndim;
  const int64_t* shape; /* ndim extents, -1 where the size depends on data; owned by the module */
  uint64_t bytes;       /* dense size in bytes; 0 when a dimension is -1 */
  /* Appended: present where struct_size covers them. An artifact compiled for a range of batch
   * sizes (`collage compile --input-shape x=1..32x...`) takes any batch from batch_min to
   * batch_max on this axis, the same for every batched input and output; `shape` and `bytes`
   * above describe the largest. batch_axis is -1 for a tensor (or an artifact) without a batch
   * range, and batch_min/batch_max are then 0. */
  int32_t batch_axis;
  int64_t batch_min;
  int64_t batch_max;
} collage_tensor_info_t;

/* Describes input / output `index`. The caller sets info->struct_size; only fields that fit in
 * it are written. Errors: NULL arguments, index out of range. */
COLLAGE_API COLLAGE_MUST_USE collage_status_t* collage_module_input_info(
    const collage_module_t* module, int32_t index, collage_tensor_info_t* info);
COLLAGE_API COLLAGE_MUST_USE collage_status_t* collage_module_output_info(
    const collage_module_t* module, int32_t index, collage_tensor_info_t* info);
/* Bytes of intermediate memory one run uses (the artifact's memory plan). */
COLLAGE_API uint64_t collage_module_arena_bytes(const collage_module_t* module);

/* ---- Running --------------------------------------------------------------------------- */

/* Runs the model. `inputs` and `outputs` hold one DLTensor per graph input / output, in order:
 * CPU memory (kDLCPU or kDLCUDAHost), dense row-major (strides NULL or compact), byte_offset
 * honoured, with exactly the dtype and shape of collage_module_input_info / _output_info, except
 * on the batch axis of an artifact with a batch range (collage_tensor_info_t::batch_axis), where
 * every batched input and output has the same batch, from batch_min to batch_max: the plan
 * compiled for that batch runs, or, for a batch without a plan of its own, the next larger one
 * on the inputs padded with zero rows (the compiler proved that rows never mix). A model with an
 * output whose shape depends on data or a string output is refused at every batch, naming the
 * output: collage_module_run_outputs runs it. The outputs are written into the caller's buffers, which must not overlap the inputs. All tensors
 * are borrowed for the call. Errors name the tensor (COLLAGE_STATUS_INVALID_ARGUMENT, e.g.
 * "input 0 'x': expected f32[1x4], got f32[1x5]") or the kernel that failed. */
COLLAGE_API COLLAGE_MUST_USE collage_status_t* collage_module_run(const collage_module_t* module,
                                                                  const DLTensor* inputs,
                                                                  int32_t num_inputs,
                                                                  const DLTensor* outputs,
                                                                  int32_t num_outputs);

/* ---- Outputs the library allocates ---------------------------------------------------- */

typedef struct collage_outputs collage_outputs_t;

/* Runs the model like collage_module_run, except that the library allocates the outputs, each
 * with the shape it comes out with: a dynamic-batch artifact's have the inputs' batch, and an
 * output whose shape depends on data (collage_module_output_info gives -1 for such a dimension:
 * NonZero's count, the boxes NonMaxSuppression keeps, ...) has its size of this run, at any
 * batch of a batch range (such a plan is compiled for every batch of its range); string outputs
 * keep their bytes until released. collage_module_run refuses a model with such an output. On success *outputs receives them, the
 * caller's to release with collage_outputs_release; on failure it is set to NULL. */
COLLAGE_API collage_status_t* collage_module_run_outputs(const collage_module_t* module,
                                                         const DLTensor* inputs,
                                                         int32_t num_inputs,
                                                         collage_outputs_t** outputs);
/* The number of outputs; 0 for NULL. */
COLLAGE_API int32_t collage_outputs_count(const collage_outputs_t* outputs);
/* Fills `tensor` with a view of output `index`: CPU memory, dense, the library's buffer and shape,
 * valid until the outputs are released. Errors: NULL arguments, index out of range. */
COLLAGE_API collage_status_t* collage_outputs_get(const collage_outputs_t* outputs, int32_t index,
                                                  DLTensor* tensor);
/* Frees the outputs; accepts NULL. */
COLLAGE_API void collage_outputs_release(collage_outputs_t* outputs);

/* What the module's executor has spent on its runs so far (wall time, time in kernels, time
 * waiting on dependencies, scheduling overhead: time its running workers spent on neither, and
 * the workers' wake-up at the start of a run; averaged over the workers). The sequential
 * executor does not measure itself: zero counts. */
typedef struct {
  uint32_t struct_size; /* set by the caller: sizeof(collage_executor_stats_t) */
  const char* executor; /* "sequential" or "waves"; static storage */
  uint64_t runs;        /* runs measured */
  uint64_t wall_ns, task_ns, wait_ns, overhead_ns; /* sums over those runs */
  uint64_t fallback_runs; /* runs handed to the sequential executor: its workers were busy */
  uint64_t wake_ns;       /* sum over the runs: from a run's start until its workers run (thread
                             wake-up, not counted in overhead_ns), mean over the workers */
} collage_executor_stats_t;

/* Notices the runtime modules gave while the module loaded (e.g. that a kernel was compiled
 * again because its precompiled form did not fit this machine's library), one per line; "" when
 * there were none, or for NULL. Owned by the module. */
COLLAGE_API const char* collage_module_load_notes(const collage_module_t* module);

/* Fills `stats` (only the fields that fit in stats->struct_size). Errors: NULL arguments. */
COLLAGE_API COLLAGE_MUST_USE collage_status_t* collage_module_executor_stats(
    const collage_module_t* module, collage_executor_stats_t* stats);

/* ---- Profiling ------------------------------------------------------------------------- */

/* Turns per-kernel timing on (nonzero) or off. Turning it on starts a new trace. */
COLLAGE_API COLLAGE_MUST_USE collage_status_t* collage_module_set_profiling(
    collage_module_t* module, int32_t enabled);
/* Writes the runs timed since profiling was turned on as a Chrome trace (JSON: one event per
 * kernel with its name, backend, module, start and duration, and one per run) to `path`. */
COLLAGE_API COLLAGE_MUST_USE collage_status_t* collage_module_write_profile(
    const collage_module_t* module, const char* path);

#ifdef __cplusplus
}
#endif

#endif /* COLLAGE_RUNTIME_H_ */
