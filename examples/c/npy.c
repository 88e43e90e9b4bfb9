/* A minimal .npy reader: version 1-3 headers, dtype '<f4', fortran_order False. */
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
