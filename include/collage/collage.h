/* The collage compiler C API: compile a model (ONNX, XGBoost JSON or LightGBM text) into an
 * artifact that libcollage_runtime loads (include/collage/runtime.h), choosing a backend for
 * every part of the model. Implemented by libcollage_compiler.so, which uses the runtime
 * library's status type (collage_status_t: NULL = success; free it with collage_status_free).
 *
 * ABI rules as in runtime.h: opaque handles with create/release pairs (release accepts NULL),
 * versioned option structs (`struct_size` first; set it with the _init function), functions only
 * ever added, no C++ exception crosses the boundary.
 *
 * Ownership: the caller owns a compiler and releases it. Buffers the library returns (artifact
 * bytes, report JSON) belong to the caller, who frees them with collage_free. Arguments are
 * borrowed for the duration of a call.
 *
 * Thread safety: different compilers are independent. Calls on one compiler must not overlap
 * (a compile reads the backend registry that collage_compiler_load_plugin changes). */
#ifndef COLLAGE_COLLAGE_H_
#define COLLAGE_COLLAGE_H_

#include <stddef.h> /* offsetof */
#include <stdint.h>

#include "collage/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The compiler library's version, e.g. "0.1.0" (static storage). */
COLLAGE_API const char* collage_compiler_version(void);

/* Incremented when a function's meaning changes incompatibly (never expected within 1). */
#define COLLAGE_COMPILER_ABI_VERSION 1
/* COLLAGE_COMPILER_ABI_VERSION of the library. */
COLLAGE_API uint32_t collage_compiler_abi_version(void);

typedef struct collage_compiler collage_compiler_t;

/* A compiler with the built-in backends registered: dnnl, eigen, trees, native (generated code),
 * openvino (where the build has it), dynamic (nodes whose shapes depend on data) and reference.
 * On success *compiler receives a compiler the caller owns. */
COLLAGE_API COLLAGE_MUST_USE collage_status_t* collage_compiler_create(
    collage_compiler_t** compiler);
/* Releases a compiler (and the plugins it loaded); accepts NULL. */
COLLAGE_API void collage_compiler_release(collage_compiler_t* compiler);

/* Loads a backend plugin (a shared library implementing include/collage/backend_plugin.h) and
 * registers it under the name it declares. Errors name the path: a library that does not load,
 * a bad plugin table, a backend name that is taken. A plugin's kernels go into an artifact when
 * its table serializes them (kernel_record); the artifact then runs where the plugin's runtime
 * module, libcollage_rt_<name>.so, is found. */
COLLAGE_API COLLAGE_MUST_USE collage_status_t* collage_compiler_load_plugin(
    collage_compiler_t* compiler, const char* path);

/* A shape for a graph input with symbolic dimensions (or, for tree models, "input" sets the
 * batch size). */
typedef struct {
  const char* name;
  int32_t ndim;
  const int64_t* shape;
} collage_input_shape_t;

/* What a compile is doing, as told to a progress callback (collage_compile_options_t.progress). */
typedef struct {
  uint32_t struct_size; /* sizeof(collage_compile_progress_t) of the library: later fields are
                           read only where it covers them */
  /* "import", "tree-strategy" (a tree ensemble's strategy is being costed; `detail` names it),
   * the placement's phases "candidates", "measure", "op-level", "evolve", "finalists", "done",
   * then "build" (the placed groups are compiled into the artifact); with a batch range, "batch"
   * before each batch's placement (done: the batches placed, total: how many). Static storage. */
  const char* phase;
  uint64_t done;        /* measure: candidates costed; evolve, finalists: placements measured;
                           batch: batches placed */
  uint64_t total;       /* measure: candidates to cost; batch: batches; 0 otherwise */
  int32_t generation;   /* evolve: the graph-level search's generation */
  double best_ms;       /* evolve, finalists: best end-to-end latency so far; -1: none yet */
  const char* detail;   /* tree-strategy: "NODE: STRATEGY" being costed; "" otherwise */
} collage_compile_progress_t;

typedef void (*collage_compile_progress_fn)(void* user_data,
                                            const collage_compile_progress_t* progress);

typedef struct {
  uint32_t struct_size; /* the bytes of this struct the caller has: collage_compile_options_init
                           sets it; an older, smaller struct gets the defaults for the rest */
  /* "two-level" (default), "op-level", "single:NAME" or "greedy". */
  const char* strategy;
  /* Wall-clock budget of the whole compile in seconds (placement and artifact); <= 0: the
   * default (60). */
  double budget_seconds;
  uint64_t seed;
  /* Persistent cost database (JSON lines), read and extended; NULL: costs are not kept. */
  const char* cost_db_path;
  /* Comma-separated backend names that may take part, e.g. "eigen,dnnl"; NULL or "": all. */
  const char* backends;
  /* The backend that takes the nodes no other can run; NULL or "": "native" (generated code,
   * which runs every operator). An artifact needs every node on a backend with a runtime module,
   * so with "reference" a model must be covered entirely by the other backends. */
  const char* fallback;
  int32_t num_input_shapes;
  const collage_input_shape_t* input_shapes;
  /* Threads a kernel may use while measured (0: one per core). */
  int32_t num_threads;
  /* ---- Appended after the first version (COLLAGE_COMPILE_OPTIONS_V1_SIZE ends here). A
   * struct with an older, smaller struct_size gets the default of each field it lacks. */
  /* The strategy of an XGBoost or
   * LightGBM model, and of each ai.onnx.ml tree-ensemble node of an ONNX model (at the batch of
   * the node's input): NULL, "" or "measured" (the default): every strategy the model can use
   * (fused, ptt, tt, gemm) is placed and costed with the backends, cost database and threads
   * above at the batch of the "input" shape, and the cheapest is compiled, as `collage compile`
   * does; a candidate the artifact cannot hold (a group left to the reference fallback) is
   * skipped. "auto": the fixed depth rule; "fused", "ptt", "tt" or "gemm": that strategy. */
  const char* tree_strategy;
  /* Appended (as above; bindings mirror it): told what the compile is doing (NULL: nothing is
   * told). Called on the thread that called collage_compile_*, never concurrently, with
   * `progress_user_data`; the progress struct is valid only during the call. */
  collage_compile_progress_fn progress;
  void* progress_user_data;
  /* Appended after progress (as above; bindings mirror it): the x86-64 CPU that generated code is compiled
   * for. NULL, "" or "host": this machine; "avx2" (= "x86-64-v3"), "avx512" (= "x86-64-v4") or
   * a CPU name LLVM knows ("haswell", "znver3", ...). This machine must run the target's code
   * (it measures it), so an AVX-512 machine compiles, measures and writes artifacts for an AVX2
   * host; costs are kept per target. An unknown or unrunnable target is
   * COLLAGE_STATUS_INVALID_ARGUMENT naming it. */
  const char* target;
  /* Appended after target: a batch range (dynamic batch). With batch_min >= 1 and
   * batch_max > batch_min, each dimension given as -1 in `input_shapes` is the batch, and the
   * artifact runs any batch from batch_min to batch_max (collage_tensor_info_t::batch_axis,
   * collage_module_run): a plan is placed and built for each of the num_batch_sizes ascending
   * `batch_sizes` ending with batch_max (0 and NULL: batch_min, the powers of two between and batch_max), and a batch
   * without a plan runs on the next larger one, padded with zero rows, which the compiler allows
   * only when it proves that the model keeps batch rows apart (otherwise every batch of the
   * range gets a plan, at most 64; a batch_sizes list is then an error naming the node that
   * mixes rows). The time budget is shared among the plans. batch_max 0: no range. */
  int64_t batch_min;
  int64_t batch_max;
  int32_t num_batch_sizes;
  const int64_t* batch_sizes;
  /* Appended after batch_sizes: the executor the artifact runs under by default, which the
   * graph-level search also scores placements with: NULL, "" or "auto" (the default: the faster
   * of the two, measured at compile time and recorded with the artifact's wave schedule),
   * "waves" or "sequential" (as `collage compile --executor`). */
  const char* executor;
  /* Appended after executor: what an ai.onnx.ml ZipMap node (a sequence of maps, which a tensor
   * cannot hold) becomes: NULL, "" or "refuse" (the default: COLLAGE_STATUS_UNIMPLEMENTED naming
   * the node), or "probabilities" (dropped: its input, the f32 [batch, classes] probabilities in
   * label order, is the output, as `collage compile --zipmap probabilities`). */
  const char* zipmap;
} collage_compile_options_t;

/* The size of the first version of collage_compile_options_t (through num_threads). */
#define COLLAGE_COMPILE_OPTIONS_V1_SIZE offsetof(collage_compile_options_t, tree_strategy)

/* Fills the first `size` bytes of `options` (the caller's sizeof: never more) with the defaults
 * and sets struct_size to min(size, the library's sizeof). Call it as
 * collage_compile_options_init, which passes sizeof *options; a size below 4 leaves `options`
 * alone. */
COLLAGE_API void collage_compile_options_init_size(collage_compile_options_t* options, size_t size);
/* The first version's entry point, kept for programs built before the one above: it writes the
 * first version's fields only (COLLAGE_COMPILE_OPTIONS_V1_SIZE bytes). */
COLLAGE_API void(collage_compile_options_init)(collage_compile_options_t* options);
#define collage_compile_options_init(options) \
  collage_compile_options_init_size((options), sizeof *(options))

/* collage_compile: the compiler in one call, from a model file to an artifact file (the C++
 * driver, include/collage/compiler.h, is the same pipeline).
 * Imports the model at `model_path` (ONNX, XGBoost JSON or LightGBM text, told apart by content),
 * runs the graph passes, places it (`options` may be NULL: defaults), builds every group and
 * writes the artifact to `artifact_path` atomically. If `report_json` is not NULL it receives the
 * placement report (JSON with a "groups" list; free with collage_free); for a tree model, or an
 * ONNX model with tree-ensemble nodes, it also holds "tree_strategies": [{"node" (the ONNX node;
 * "" for a tree-model file), "mode", "batch", "chosen", "kernels_measured", "costs_reused",
 * "note", "candidates": [{"strategy", "ms" (-1: skipped), "skipped" (why)}]}], the choices made
 * by the options' tree_strategy. Errors name the model
 * file, node, group or backend at fault; COLLAGE_STATUS_INVALID_ARGUMENT for bad input. */
COLLAGE_API COLLAGE_MUST_USE collage_status_t* collage_compile(
    collage_compiler_t* compiler, const char* model_path, const collage_compile_options_t* options,
    const char* artifact_path, char** report_json);
/* collage_compile under the name it had first. */
COLLAGE_API COLLAGE_MUST_USE collage_status_t* collage_compile_file(
    collage_compiler_t* compiler, const char* model_path, const collage_compile_options_t* options,
    const char* artifact_path, char** report_json);

/* The same for an ONNX model of `model_size` bytes in memory (external data is refused); the
 * artifact is returned in *artifact / *artifact_size (free with collage_free). */
COLLAGE_API COLLAGE_MUST_USE collage_status_t* collage_compile_memory(
    collage_compiler_t* compiler, const void* model, size_t model_size,
    const collage_compile_options_t* options, void** artifact, size_t* artifact_size,
    char** report_json);

/* Frees a buffer returned by this library; accepts NULL. */
COLLAGE_API void collage_free(void* buffer);

#ifdef __cplusplus
}
#endif

#endif /* COLLAGE_COLLAGE_H_ */
