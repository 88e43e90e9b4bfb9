/* The cgemm kernel, shared by both halves of the example plugin: the compile-time plugin
 * (gemm_plugin.c, libcollage_gemm_plugin.so) and its runtime module (gemm_module.c,
 * libcollage_rt_cgemm.so). A small f32 GEMM ([m x k] @ [k x n], optionally followed by Relu) or a
 * standalone Relu over n elements; its parameters are what an artifact stores. */
#ifndef COLLAGE_EXAMPLE_GEMM_KERNEL_H_
#define COLLAGE_EXAMPLE_GEMM_KERNEL_H_

#include <stddef.h>
#include <stdint.h>

enum { GEMM_KIND_MATMUL = 0, GEMM_KIND_RELU = 1 };
enum { GEMM_MAX_TASKS = 4 };
/* "CGM1": the parameter layout's version. */
#define GEMM_PARAMS_MAGIC 0x314d4743u

/* One operand: kernel argument `arg` (>= 0), else constant `constant` of the kernel. */
typedef struct {
  int32_t arg;
  int32_t constant;
} gemm_operand_t;

/* The kernel's parameters, stored in artifacts as these bytes (the host's byte order: an
 * artifact is run on the machine kind it was compiled for). */
typedef struct {
  uint32_t magic; /* GEMM_PARAMS_MAGIC */
  int32_t kind;   /* GEMM_KIND_* */
  int32_t relu;   /* GEMM_KIND_MATMUL: Relu on the result */
  int32_t tasks;
  int64_t m, k, n; /* GEMM_KIND_MATMUL: [m x k] @ [k x n]; GEMM_KIND_RELU: n elements */
  gemm_operand_t a, b; /* b unused for GEMM_KIND_RELU */
  int32_t out_arg;     /* the argument the result is written to (after the inputs) */
  int32_t num_args;    /* inputs and the output */
} gemm_params_t;

/* Checks `p` (as read back from `size` bytes) against `num_args` arguments and `num_constants`
 * constants; NULL when it is sound, else what is wrong. */
const char* gemm_params_check(const gemm_params_t* p, size_t size, int32_t num_args,
                              int32_t num_constants);

/* Runs task `task` of `tasks` (rows split evenly): `args` are the kernel's argument buffers
 * (inputs, then the output), `constants` its constants. */
void gemm_run(const gemm_params_t* p, void* const* args, const void* const* constants,
              int32_t task, int32_t tasks);

#endif /* COLLAGE_EXAMPLE_GEMM_KERNEL_H_ */
