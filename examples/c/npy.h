/* A minimal reader and writer of NumPy .npy files for the examples: little-endian float32, C
 * order. */
#ifndef COLLAGE_EXAMPLE_NPY_H_
#define COLLAGE_EXAMPLE_NPY_H_

#include <stddef.h>
#include <stdint.h>

#define NPY_MAX_DIMS 8

typedef struct {
  int32_t ndim;
  int64_t shape[NPY_MAX_DIMS];
  int64_t count; /* number of elements */
  float* data;   /* malloc'ed; free with npy_free */
} npy_array_t;

/* Reads `path` into `out`. Returns 0 on success; otherwise writes a message into `err`
 * (capacity `err_size`) and returns -1. */
int npy_read_f32(const char* path, npy_array_t* out, char* err, size_t err_size);
void npy_free(npy_array_t* a);
/* Writes `data` (shape[0] x ... x shape[ndim-1] floats) to `path` as a version 1 .npy file.
 * Returns 0 on success; otherwise writes a message into `err` and returns -1. */
int npy_write_f32(const char* path, const float* data, int32_t ndim, const int64_t* shape,
                  char* err, size_t err_size);

#endif /* COLLAGE_EXAMPLE_NPY_H_ */
