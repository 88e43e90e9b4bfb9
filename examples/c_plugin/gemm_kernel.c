/* The cgemm kernel (gemm_kernel.h): its parameter check and its loops. */
#include "gemm_kernel.h"

static int operand_ok(const gemm_operand_t* o, int32_t num_inputs, int32_t num_constants) {
  return (o->arg >= 0 && o->arg < num_inputs) ||
         (o->arg < 0 && o->constant >= 0 && o->constant < num_constants);
}

const char* gemm_params_check(const gemm_params_t* p, size_t size, int32_t num_args,
                              int32_t num_constants) {
  if (size != sizeof *p || p->magic != GEMM_PARAMS_MAGIC) return "not cgemm parameters (CGM1)";
  if (p->num_args != num_args || p->out_arg != num_args - 1)
    return "the argument count does not match the parameters";
  if (p->tasks < 1 || p->tasks > GEMM_MAX_TASKS) return "bad task count";
  if (p->kind == GEMM_KIND_MATMUL) {
    if (p->m < 0 || p->k < 0 || p->n < 0) return "negative GEMM extent";
    if (!operand_ok(&p->a, p->out_arg, num_constants) ||
        !operand_ok(&p->b, p->out_arg, num_constants))
      return "a GEMM operand is neither an input nor a constant";
    return 0;
  }
  if (p->kind == GEMM_KIND_RELU)
    return p->n >= 0 && operand_ok(&p->a, p->out_arg, num_constants) ? 0 : "bad Relu operand";
  return "unknown kernel kind";
}

static const float* operand_data(const gemm_operand_t* o, void* const* args,
                                 const void* const* constants) {
  return (const float*)(o->arg >= 0 ? args[o->arg] : constants[o->constant]);
}

void gemm_run(const gemm_params_t* p, void* const* args, const void* const* constants,
              int32_t task, int32_t tasks) {
  const float* a = operand_data(&p->a, args, constants);
  float* c = (float*)args[p->out_arg];
  const int64_t rows = p->kind == GEMM_KIND_MATMUL ? p->m : p->n;
  const int64_t begin = rows * task / tasks, end = rows * (task + 1) / tasks;
  if (p->kind == GEMM_KIND_RELU) {
    for (int64_t i = begin; i < end; ++i) c[i] = a[i] > 0.f ? a[i] : 0.f;
    return;
  }
  const float* b = operand_data(&p->b, args, constants);
  for (int64_t i = begin; i < end; ++i) {
    float* row = c + i * p->n;
    for (int64_t j = 0; j < p->n; ++j) row[j] = 0.f;
    for (int64_t q = 0; q < p->k; ++q) {
      const float av = a[i * p->k + q];
      const float* brow = b + q * p->n;
      for (int64_t j = 0; j < p->n; ++j) row[j] += av * brow[j];
    }
    if (p->relu)
      for (int64_t j = 0; j < p->n; ++j) row[j] = row[j] > 0.f ? row[j] : 0.f;
  }
}
