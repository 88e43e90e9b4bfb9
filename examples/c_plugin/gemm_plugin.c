/* The compile-time half of a collage backend plugin written in C (libcollage_gemm_plugin.so): a
 * small f32 GEMM for 2-D MatMul with an optional fused Relu after it, and a standalone Relu. It
 * names what it runs with patterns, builds kernels that run in process while the compiler
 * measures them, and records each kernel (kernel_record) so that an artifact can hold it: at run
 * time its runtime module (gemm_module.c, libcollage_rt_cgemm.so) re-creates the kernel. Load it
 * with collage_compiler_load_plugin, `collage compile --plugin` or collage::load_backend_plugin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collage/backend_plugin.h"
#include "collage/runtime.h" /* collage_status_code_t: the error convention */
#include "gemm_kernel.h"

/* A built kernel: its parameters, its constants (the group's weights) and its output type. */
typedef struct {
  gemm_params_t params;
  int32_t num_constants;
  const void* constants[2];
  collage_tensor_desc_t constant_descs[2];
  int64_t constant_shapes[2][COLLAGE_PLUGIN_MAX_RANK];
  int32_t out_rank;
  int64_t out_shape[COLLAGE_PLUGIN_MAX_RANK];
} kernel_t;

static const collage_backend_pattern_t kPatterns[] = {
    {"matmul_relu", "(Relu? (MatMul *[dtype=f32, rank=2] *[dtype=f32, rank=2]))"},
    {"relu", "(Relu *[dtype=f32])"},
};

static int32_t fail(char* err, size_t err_size, int32_t code, const char* message) {
  snprintf(err, err_size, "%s", message);
  return code;
}

/* Maps group value `value` to a kernel argument or a constant of `k` (its data stays valid until
 * the kernel is destroyed; its descriptor is copied). */
static int operand(const collage_group_t* g, int32_t value, kernel_t* k, gemm_operand_t* out) {
  out->arg = -1;
  out->constant = -1;
  const collage_group_value_t* v = &g->values[value];
  if (v->kind == COLLAGE_VALUE_CONSTANT) {
    if (v->type.rank > COLLAGE_PLUGIN_MAX_RANK || k->num_constants == 2) return 1;
    const int32_t c = k->num_constants++;
    k->constants[c] = v->data;
    memcpy(k->constant_shapes[c], v->type.shape, sizeof(int64_t) * (size_t)v->type.rank);
    k->constant_descs[c] = (collage_tensor_desc_t){v->type.dtype, v->type.rank,
                                                   k->constant_shapes[c]};
    out->constant = c;
    return 0;
  }
  for (int32_t i = 0; i < g->num_inputs; ++i)
    if (g->inputs[i] == value) {
      out->arg = i;
      return 0;
    }
  return 1;
}

static int32_t build_matmul(const collage_group_t* g, kernel_t* k, char* err, size_t err_size) {
  const collage_group_node_t* mm = &g->nodes[0];
  const collage_tensor_desc_t* a = &g->values[mm->inputs[0]].type;
  const collage_tensor_desc_t* b = &g->values[mm->inputs[1]].type;
  gemm_params_t* p = &k->params;
  p->kind = GEMM_KIND_MATMUL;
  p->relu = g->num_nodes == 2;
  if (p->relu && strcmp(g->nodes[1].op, "Relu") != 0)
    return fail(err, err_size, COLLAGE_STATUS_INVALID_ARGUMENT, "the node after MatMul must be Relu");
  p->m = a->shape[0];
  p->k = a->shape[1];
  p->n = b->shape[1];
  k->out_rank = 2;
  k->out_shape[0] = p->m;
  k->out_shape[1] = p->n;
  if (operand(g, mm->inputs[0], k, &p->a) || operand(g, mm->inputs[1], k, &p->b))
    return fail(err, err_size, COLLAGE_STATUS_INVALID_ARGUMENT,
                "a MatMul operand is neither an input nor a constant");
  return 0;
}

static int32_t build_relu(const collage_group_t* g, kernel_t* k, char* err, size_t err_size) {
  const collage_tensor_desc_t* x = &g->values[g->nodes[0].inputs[0]].type;
  if (x->rank > COLLAGE_PLUGIN_MAX_RANK)
    return fail(err, err_size, COLLAGE_STATUS_INVALID_ARGUMENT, "Relu input rank too large");
  k->params.kind = GEMM_KIND_RELU;
  k->params.n = 1;
  k->out_rank = x->rank;
  for (int32_t d = 0; d < x->rank; ++d) {
    k->params.n *= x->shape[d];
    k->out_shape[d] = x->shape[d];
  }
  if (operand(g, g->nodes[0].inputs[0], k, &k->params.a))
    return fail(err, err_size, COLLAGE_STATUS_INVALID_ARGUMENT,
                "the Relu operand is neither an input nor a constant");
  return 0;
}

static int32_t build(void* user_data, const collage_group_t* g, void** out, char* err,
                     size_t err_size) {
  (void)user_data;
  if (g->num_outputs != 1 || g->num_nodes > 2)
    return fail(err, err_size, COLLAGE_STATUS_INVALID_ARGUMENT,
                "only MatMul, Relu or MatMul+Relu groups with one output");
  kernel_t* k = calloc(1, sizeof *k);
  if (!k) return fail(err, err_size, COLLAGE_STATUS_INTERNAL, "out of memory");
  int32_t rc;
  if (strcmp(g->nodes[0].op, "MatMul") == 0)
    rc = build_matmul(g, k, err, err_size);
  else if (strcmp(g->nodes[0].op, "Relu") == 0 && g->num_nodes == 1)
    rc = build_relu(g, k, err, err_size);
  else
    rc = fail(err, err_size, COLLAGE_STATUS_INVALID_ARGUMENT, "unsupported group");
  if (rc != 0) {
    free(k);
    return rc;
  }
  gemm_params_t* p = &k->params;
  p->magic = GEMM_PARAMS_MAGIC;
  p->out_arg = g->num_inputs;
  p->num_args = g->num_inputs + 1;
  const int64_t rows = p->kind == GEMM_KIND_MATMUL ? p->m : p->n;
  p->tasks = rows < GEMM_MAX_TASKS ? (int32_t)(rows > 0 ? rows : 1) : GEMM_MAX_TASKS;
  *out = k;
  return 0;
}

static int32_t output_type(void* kernel, int32_t index, int32_t* dtype, int32_t* rank,
                           int64_t* shape, char* err, size_t err_size) {
  const kernel_t* k = kernel;
  if (index != 0) return fail(err, err_size, COLLAGE_STATUS_INVALID_ARGUMENT, "one output only");
  *dtype = COLLAGE_DTYPE_F32;
  *rank = k->out_rank;
  for (int32_t d = 0; d < k->out_rank; ++d) shape[d] = k->out_shape[d];
  return 0;
}

static int32_t task_count(void* kernel) {
  return ((const kernel_t*)kernel)->params.tasks;
}

static int32_t run(void* kernel, const DLTensor* args, int32_t num_args, int32_t task_id,
                   int32_t tasks, char* err, size_t err_size) {
  const kernel_t* k = kernel;
  if (num_args != k->params.num_args)
    return fail(err, err_size, COLLAGE_STATUS_INVALID_ARGUMENT, "wrong argument count");
  void* buffers[8];
  if (num_args > 8) return fail(err, err_size, COLLAGE_STATUS_INVALID_ARGUMENT, "too many arguments");
  for (int32_t i = 0; i < num_args; ++i) buffers[i] = args[i].data;
  gemm_run(&k->params, buffers, k->constants, task_id, tasks);
  return 0;
}

/* What an artifact stores: the parameters and the constants, which the runtime module receives
 * in its kernel descriptor. */
static int32_t record(void* kernel, collage_kernel_record_t* r, char* err, size_t err_size) {
  (void)err;
  (void)err_size;
  const kernel_t* k = kernel;
  r->entry = "cgemm";
  r->params = (const uint8_t*)&k->params;
  r->params_size = sizeof k->params;
  r->num_constants = k->num_constants;
  r->constant_descs = k->constant_descs;
  r->constants = k->constants;
  return 0;
}

static void destroy(void* kernel) {
  free(kernel);
}

static const collage_backend_v1_t kTable = {
    .struct_size = sizeof(collage_backend_v1_t),
    .abi_version = COLLAGE_BACKEND_ABI_VERSION,
    .name = "cgemm",
    .version = "2",
    .device = COLLAGE_DEVICE_CPU,
    .num_patterns = sizeof kPatterns / sizeof kPatterns[0],
    .patterns = kPatterns,
    .user_data = NULL,
    .check = NULL,
    .build = build,
    .kernel_output_type = output_type,
    .kernel_task_count = task_count,
    .kernel_run = run,
    .kernel_destroy = destroy,
    .kernel_record = record,
};

__attribute__((visibility("default"))) const collage_backend_v1_t* collage_backend_v1_get(void) {
  return &kTable;
}
