/* A collage backend plugin written in C: a small f32 GEMM for 2-D MatMul with an optional fused
 * Relu after it, and a standalone Relu. Build it as a shared library and load it with
 * collage::load_backend_plugin("libcollage_gemm_plugin.so"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collage/backend_plugin.h"

enum { KIND_MATMUL = 0, KIND_RELU = 1 };
enum { MAX_TASKS = 4 };

/* One operand: a kernel argument (arg >= 0) or constant data. */
typedef struct {
  int32_t arg;
  const float* constant;
} operand_t;

typedef struct {
  int kind;
  int relu;        /* KIND_MATMUL: apply Relu to the result */
  int64_t m, k, n; /* KIND_MATMUL: [m x k] @ [k x n]; KIND_RELU: n elements */
  operand_t a, b;  /* b unused for KIND_RELU */
  int32_t out_arg;
  int32_t tasks;
  int32_t out_rank;
  int64_t out_shape[COLLAGE_PLUGIN_MAX_RANK];
} kernel_t;

static const collage_backend_pattern_t kPatterns[] = {
    {"matmul_relu", "(Relu? (MatMul *[dtype=f32, rank=2] *[dtype=f32, rank=2]))"},
    {"relu", "(Relu *[dtype=f32])"},
};

static int fail(char* err, size_t err_size, const char* message) {
  snprintf(err, err_size, "%s", message);
  return 1;
}

/* Maps a group value to a kernel argument or constant data. */
static int operand(const collage_group_t* g, int32_t value, operand_t* out) {
  out->arg = -1;
  out->constant = NULL;
  if (g->values[value].kind == COLLAGE_VALUE_CONSTANT) {
    out->constant = (const float*)g->values[value].data;
    return 0;
  }
  for (int32_t i = 0; i < g->num_inputs; ++i)
    if (g->inputs[i] == value) {
      out->arg = i;
      return 0;
    }
  return 1;
}

static int32_t build(void* user_data, const collage_group_t* g, void** out, char* err,
                     size_t err_size) {
  (void)user_data;
  const collage_group_node_t* first = &g->nodes[0];
  const collage_group_node_t* last = &g->nodes[g->num_nodes - 1];
  if (g->num_outputs != 1 || g->num_nodes > 2)
    return fail(err, err_size, "only MatMul, Relu or MatMul+Relu groups with one output");
  kernel_t* k = calloc(1, sizeof *k);
  if (!k) return fail(err, err_size, "out of memory");
  k->out_arg = g->num_inputs;
  if (strcmp(first->op, "MatMul") == 0) {
    const collage_tensor_desc_t* a = &g->values[first->inputs[0]].type;
    const collage_tensor_desc_t* b = &g->values[first->inputs[1]].type;
    k->kind = KIND_MATMUL;
    k->relu = g->num_nodes == 2 && strcmp(last->op, "Relu") == 0;
    k->m = a->shape[0];
    k->k = a->shape[1];
    k->n = b->shape[1];
    k->out_rank = 2;
    k->out_shape[0] = k->m;
    k->out_shape[1] = k->n;
    if (operand(g, first->inputs[0], &k->a) || operand(g, first->inputs[1], &k->b)) {
      free(k);
      return fail(err, err_size, "MatMul operand is neither an input nor a constant");
    }
    if (g->num_nodes == 2 && !k->relu) {
      free(k);
      return fail(err, err_size, "the node after MatMul must be Relu");
    }
  } else if (strcmp(first->op, "Relu") == 0 && g->num_nodes == 1) {
    const collage_tensor_desc_t* x = &g->values[first->inputs[0]].type;
    if (x->rank > COLLAGE_PLUGIN_MAX_RANK) {
      free(k);
      return fail(err, err_size, "Relu input rank too large");
    }
    k->kind = KIND_RELU;
    k->n = 1;
    k->out_rank = x->rank;
    for (int32_t d = 0; d < x->rank; ++d) {
      k->n *= x->shape[d];
      k->out_shape[d] = x->shape[d];
    }
    if (operand(g, first->inputs[0], &k->a)) {
      free(k);
      return fail(err, err_size, "Relu operand is neither an input nor a constant");
    }
  } else {
    free(k);
    return fail(err, err_size, "unsupported group");
  }
  int64_t rows = k->kind == KIND_MATMUL ? k->m : k->n;
  k->tasks = rows < MAX_TASKS ? (int32_t)(rows > 0 ? rows : 1) : MAX_TASKS;
  *out = k;
  return 0;
}

static int32_t output_type(void* kernel, int32_t index, int32_t* dtype, int32_t* rank,
                           int64_t* shape, char* err, size_t err_size) {
  const kernel_t* k = kernel;
  if (index != 0) return fail(err, err_size, "one output only");
  *dtype = COLLAGE_DTYPE_F32;
  *rank = k->out_rank;
  for (int32_t d = 0; d < k->out_rank; ++d) shape[d] = k->out_shape[d];
  return 0;
}

static int32_t task_count(void* kernel) {
  return ((const kernel_t*)kernel)->tasks;
}

static const float* data_of(const operand_t* o, const DLTensor* args) {
  return o->constant ? o->constant : (const float*)args[o->arg].data;
}

static int32_t run(void* kernel, const DLTensor* args, int32_t num_args, int32_t task_id,
                   int32_t tasks, char* err, size_t err_size) {
  const kernel_t* k = kernel;
  if (num_args != k->out_arg + 1) return fail(err, err_size, "wrong argument count");
  const float* a = data_of(&k->a, args);
  float* c = (float*)args[k->out_arg].data;
  int64_t rows = k->kind == KIND_MATMUL ? k->m : k->n;
  int64_t begin = rows * task_id / tasks, end = rows * (task_id + 1) / tasks;
  if (k->kind == KIND_RELU) {
    for (int64_t i = begin; i < end; ++i) c[i] = a[i] > 0.f ? a[i] : 0.f;
    return 0;
  }
  const float* b = data_of(&k->b, args);
  for (int64_t i = begin; i < end; ++i) {
    float* row = c + i * k->n;
    for (int64_t j = 0; j < k->n; ++j) row[j] = 0.f;
    for (int64_t p = 0; p < k->k; ++p) {
      float av = a[i * k->k + p];
      const float* brow = b + p * k->n;
      for (int64_t j = 0; j < k->n; ++j) row[j] += av * brow[j];
    }
    if (k->relu)
      for (int64_t j = 0; j < k->n; ++j) row[j] = row[j] > 0.f ? row[j] : 0.f;
  }
  return 0;
}

static void destroy(void* kernel) {
  free(kernel);
}

static const collage_backend_v1_t kTable = {
    .struct_size = sizeof(collage_backend_v1_t),
    .abi_version = COLLAGE_BACKEND_ABI_VERSION,
    .name = "cgemm",
    .version = "1",
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
};

__attribute__((visibility("default"))) const collage_backend_v1_t* collage_backend_v1_get(void) {
  return &kTable;
}
