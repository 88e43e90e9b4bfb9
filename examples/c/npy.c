/* A minimal .npy reader (version 1-3 headers) and writer (version 1), dtype '<f4', C order. */
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char* err, size_t err_size, const char* path, const char* what) {
  snprintf(err, err_size, "%s: %s", path, what);
  return -1;
}

int npy_read_f32(const char* path, npy_array_t* out, char* err, size_t err_size) {
  memset(out, 0, sizeof *out);
  FILE* f = fopen(path, "rb");
  if (!f) return fail(err, err_size, path, "cannot open");
  unsigned char magic[10];
  if (fread(magic, 1, 10, f) != 10 || memcmp(magic, "\x93NUMPY", 6) != 0) {
    fclose(f);
    return fail(err, err_size, path, "not a .npy file");
  }
  size_t header_len = magic[8] | (size_t)magic[9] << 8;
  if (magic[6] >= 2) { /* versions 2 and 3 have a 4-byte header length */
    unsigned char more[2];
    if (fread(more, 1, 2, f) != 2) {
      fclose(f);
      return fail(err, err_size, path, "truncated header");
    }
    header_len |= (size_t)more[0] << 16 | (size_t)more[1] << 24;
  }
  char* header = malloc(header_len + 1);
  if (!header || fread(header, 1, header_len, f) != header_len) {
    free(header);
    fclose(f);
    return fail(err, err_size, path, "truncated header");
  }
  header[header_len] = '\0';
  const char* shape = strstr(header, "'shape': (");
  if (!strstr(header, "'descr': '<f4'") || !strstr(header, "'fortran_order': False") || !shape) {
    free(header);
    fclose(f);
    return fail(err, err_size, path, "only little-endian float32 arrays in C order are supported");
  }
  out->count = 1;
  for (const char* p = shape + strlen("'shape': ("); *p && *p != ')';) {
    char* end;
    long long d = strtoll(p, &end, 10);
    if (end == p) break;
    if (out->ndim == NPY_MAX_DIMS || d < 0) {
      free(header);
      fclose(f);
      return fail(err, err_size, path, "unsupported shape");
    }
    out->shape[out->ndim++] = d;
    out->count *= d;
    p = end;
    while (*p == ',' || *p == ' ') ++p;
  }
  free(header);
  out->data = malloc((size_t)out->count * sizeof(float) + 1);
  if (!out->data || fread(out->data, sizeof(float), (size_t)out->count, f) != (size_t)out->count) {
    npy_free(out);
    fclose(f);
    return fail(err, err_size, path, "truncated data");
  }
  fclose(f);
  return 0;
}

void npy_free(npy_array_t* a) {
  free(a->data);
  a->data = NULL;
}

int npy_write_f32(const char* path, const float* data, int32_t ndim, const int64_t* shape,
                  char* err, size_t err_size) {
  char dims[NPY_MAX_DIMS * 24 + 4] = "";
  int64_t count = 1;
  size_t len = 0;
  if (ndim < 0 || ndim > NPY_MAX_DIMS) return fail(err, err_size, path, "unsupported shape");
  for (int32_t i = 0; i < ndim; ++i) {
    len += (size_t)snprintf(dims + len, sizeof dims - len, "%lld,%s", (long long)shape[i],
                            i + 1 < ndim ? " " : "");
    count *= shape[i];
  }
  if (ndim > 1) dims[len - 1] = '\0'; /* (2, 3) but (5,) */
  char header[sizeof dims + 160];
  int n = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }",
                   dims);
  /* The header, padded with spaces and ended by a newline, makes the data start 64-aligned. */
  size_t header_len = ((size_t)n + 10 + 1 + 63) / 64 * 64 - 10;
  memset(header + n, ' ', header_len - 1 - (size_t)n);
  header[header_len - 1] = '\n';
  unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(header_len & 0xff),
                             (unsigned char)(header_len >> 8)};
  FILE* f = fopen(path, "wb");
  if (!f) return fail(err, err_size, path, "cannot create");
  int ok = fwrite(magic, 1, 10, f) == 10 && fwrite(header, 1, header_len, f) == header_len &&
           fwrite(data, sizeof(float), (size_t)count, f) == (size_t)count;
  if (fclose(f) != 0) ok = 0;
  return ok ? 0 : fail(err, err_size, path, "write failed");
}
