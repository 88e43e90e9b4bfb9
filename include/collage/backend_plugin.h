/* The C ABI of a user-defined backend plugin (`collage_backend_v1`): a shared library that names
 * the subgraphs it can run with pattern text (include/collage/pattern.h documents the syntax),
 * builds a matched group into an opaque kernel, and runs kernels on DLPack tensors.
 *
 * A plugin's kernels ship in artifacts when its table has kernel_record: at compile time each
 * kernel says how to re-create it (an entry, parameter bytes and constants, written into the
 * artifact), and at run time libcollage_runtime opens the plugin's runtime module,
 * libcollage_rt_<name>.so (the runtime-module ABI of include/collage/runtime_module.h, `name` the
 * table's), and hands it those in a collage_kernel_desc_t. The runtime looks for the module in
 * collage_load_options_t.module_dir, next to libcollage_runtime.so, then on the library path; an
 * artifact whose module is nowhere gives COLLAGE_STATUS_NOT_FOUND naming the module and the
 * file. examples/c_plugin has both halves.
 *
 * A plugin exports `collage_backend_v1_get`, returning a table in static storage (never freed).
 * collage loads it with load_backend_plugin (include/collage/backend_loader.h), which checks the
 * table (struct_size, abi_version, non-null callbacks, every pattern parses) and turns every
 * plugin failure into an error naming the plugin - a plugin never takes the process down by
 * returning an error.
 *
 * ABI rules: structs start with `struct_size` so fields can be appended; functions are only ever
 * added; no C++ exception may cross this boundary; every pointer's owner is stated. Functions
 * returning int32_t follow the error convention of runtime_module.h: 0 on success, else a
 * collage_status_code_t (COLLAGE_STATUS_INVALID_ARGUMENT for a group the plugin will not take or
 * build, COLLAGE_STATUS_KERNEL_FAILED for a failed run) with a NUL-terminated message in `err`
 * (capacity `err_size`, always >= 1). */
#ifndef COLLAGE_BACKEND_PLUGIN_H_
#define COLLAGE_BACKEND_PLUGIN_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#include "collage/runtime_module.h" /* collage_dtype_t, collage_tensor_desc_t */

#ifdef __cplusplus
extern "C" {
#endif

#define COLLAGE_BACKEND_ABI_VERSION 1

typedef enum { COLLAGE_DEVICE_CPU = 0, COLLAGE_DEVICE_CUDA = 1 } collage_device_t;

/* One pattern: a name (shown in placement reports) and its text, e.g. "(Relu? (MatMul * *))". */
typedef struct {
  const char* name;
  const char* pattern;
} collage_backend_pattern_t;

typedef enum {
  COLLAGE_VALUE_INPUT = 0,    /* read from outside the group: a kernel argument */
  COLLAGE_VALUE_CONSTANT = 1, /* a constant: `data` holds it */
  COLLAGE_VALUE_NODE = 2      /* produced by a node of the group */
} collage_value_kind_t;

/* A value of a group. */
typedef struct {
  const char* name;
  collage_tensor_desc_t type;
  int32_t kind;     /* collage_value_kind_t */
  const void* data; /* COLLAGE_VALUE_CONSTANT: dense row-major contents; else NULL */
} collage_group_value_t;

typedef enum {
  COLLAGE_ATTR_INT = 0,    /* `i` */
  COLLAGE_ATTR_FLOAT = 1,  /* `f` */
  COLLAGE_ATTR_STRING = 2, /* `s` */
  COLLAGE_ATTR_INTS = 3,   /* `count` values at `ints` */
  COLLAGE_ATTR_FLOATS = 4, /* `count` values at `floats` */
  COLLAGE_ATTR_TENSOR = 5  /* `tensor` (type) and `tensor_data` (NULL for an absent tensor) */
} collage_attr_kind_t;

/* One attribute of a node, named as in ONNX ("strides", "group", "alpha"). */
typedef struct {
  const char* name;
  int32_t kind; /* collage_attr_kind_t */
  int64_t i;
  double f;
  const char* s;
  int32_t count;
  const int64_t* ints;
  const float* floats;
  collage_tensor_desc_t tensor;
  const void* tensor_data;
} collage_group_attr_t;

/* One operator call of a group. Inputs and outputs are indices into the group's values; an
 * absent optional input is -1. */
typedef struct {
  const char* op; /* operator name, e.g. "MatMul" */
  const char* name;
  int32_t num_inputs;
  const int32_t* inputs;
  int32_t num_outputs;
  const int32_t* outputs;
  int32_t num_attrs;
  const collage_group_attr_t* attrs;
} collage_group_node_t;

/* A group of nodes: a pattern match offered to `check`, or the group to `build`. Nodes are in
 * topological order. `inputs` / `outputs` list the values that are the kernel's arguments, in
 * argument order (inputs first, then outputs). Everything is borrowed for the duration of the
 * call, except constant `data`, which stays valid until the kernel built from it is destroyed. */
typedef struct {
  uint32_t struct_size;
  int32_t num_values;
  const collage_group_value_t* values;
  int32_t num_nodes;
  const collage_group_node_t* nodes;
  int32_t num_inputs;
  const int32_t* inputs;
  int32_t num_outputs;
  const int32_t* outputs;
} collage_group_t;

/* How a runtime module re-creates a kernel (kernel_record fills it; everything it points to is
 * owned by the kernel and stays valid until kernel_destroy). At run time the plugin's runtime
 * module receives `entry`, `params` and the constants in its collage_kernel_desc_t, with the
 * group's arguments (inputs, then outputs) as `args`. */
typedef struct {
  uint32_t struct_size; /* set by collage before the call: sizeof(collage_kernel_record_t) */
  const char* entry;    /* the kernel's kind for the runtime module, NUL-terminated */
  const uint8_t* params; /* module-specific parameters, copied into the artifact */
  size_t params_size;
  int32_t num_constants; /* constants the module receives, in this order (e.g. weights) */
  const collage_tensor_desc_t* constant_descs;
  const void* const* constants; /* dense row-major data of each, copied into the artifact */
} collage_kernel_record_t;

/* The plugin's table. */
typedef struct collage_backend_v1 {
  uint32_t struct_size; /* sizeof(collage_backend_v1_t) as the plugin was compiled */
  uint32_t abi_version; /* COLLAGE_BACKEND_ABI_VERSION */
  const char* name;     /* backend name, unique in a registry, e.g. "mygemm" */
  const char* version;  /* part of cost-database keys: change it when kernels change */
  int32_t device;       /* collage_device_t */
  int32_t num_patterns;
  const collage_backend_pattern_t* patterns;
  void* user_data; /* passed back to check and build */

  /* Optional (NULL: every match is accepted): returns 0 to accept the match of pattern
   * `pattern_index`, nonzero to reject it with a reason in `err`. */
  int32_t (*check)(void* user_data, int32_t pattern_index, const collage_group_t* match, char* err,
                   size_t err_size);
  /* Builds a kernel for `group`; *kernel receives an opaque instance that collage releases with
   * kernel_destroy. */
  int32_t (*build)(void* user_data, const collage_group_t* group, void** kernel, char* err,
                   size_t err_size);
  /* The type output `index` of the kernel will have (`shape` has room for
   * COLLAGE_PLUGIN_MAX_RANK extents). collage refuses a kernel whose outputs disagree with the
   * group's inferred types. */
  int32_t (*kernel_output_type)(void* kernel, int32_t index, int32_t* dtype, int32_t* rank,
                                int64_t* shape, char* err, size_t err_size);
  /* Number of independent tasks (>= 1); the tasks of one run may execute concurrently. */
  int32_t (*kernel_task_count)(void* kernel);
  /* Runs task `task_id` of `task_count`. `args` holds the group's inputs then its outputs as
   * dense row-major CPU DLTensors (borrowed; data is written only for outputs). Thread-safe:
   * one kernel may run on several threads at once. */
  int32_t (*kernel_run)(void* kernel, const DLTensor* args, int32_t num_args, int32_t task_id,
                        int32_t task_count, char* err, size_t err_size);
  /* Releases a kernel; accepts NULL. */
  void (*kernel_destroy)(void* kernel);
  /* ---- Appended after the first version: present only where struct_size covers them
   * (COLLAGE_BACKEND_HAS). A table of the first version's size (COLLAGE_BACKEND_V1_BASE_SIZE)
   * is still accepted. */
  /* Optional (NULL: the plugin's kernels run in process only; compiling an artifact that holds
   * one fails, naming the plugin): fills `record` with how the plugin's runtime module
   * re-creates `kernel`. */
  int32_t (*kernel_record)(void* kernel, collage_kernel_record_t* record, char* err,
                           size_t err_size);
} collage_backend_v1_t;

/* The struct_size of a table with the first version's fields only: the least a plugin gives. */
#define COLLAGE_BACKEND_V1_BASE_SIZE offsetof(collage_backend_v1_t, kernel_record)

/* Whether `table` (a collage_backend_v1_t*) has the appended, optional function `field`. */
#define COLLAGE_BACKEND_HAS(table, field)                                          \
  ((table)->struct_size >= offsetof(collage_backend_v1_t, field) + sizeof(void*) && \
   (table)->field != NULL)

#define COLLAGE_PLUGIN_MAX_RANK 8

/* The symbol a plugin exports. */
#define COLLAGE_BACKEND_V1_ENTRY "collage_backend_v1_get"
typedef const collage_backend_v1_t* (*collage_backend_v1_get_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* COLLAGE_BACKEND_PLUGIN_H_ */
