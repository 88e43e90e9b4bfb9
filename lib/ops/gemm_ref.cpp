// Cache-blocked single-threaded GEMM (GotoBLAS layout: packed A and B panels, MR x NR micro-tile).
#include "ops/gemm_ref.h"

#include <algorithm>
#include <vector>

namespace collage::ops {
namespace {

// Micro-tile: MR rows of A against NR columns of B, held in registers. NR is a multiple of the
// vector width, so the compiler turns the inner j loops into whole vector operations.
constexpr int64_t kMR = 4;
constexpr int64_t kNR = 16;
// Cache blocks: a KC x NR panel of B stays in L1, an MC x KC block of A in L2, and a KC x NC
// block of B in L3.
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 120;
constexpr int64_t kNC = 3072;

float element(const MatrixRef& x, int64_t i, int64_t j) {
  return x.transposed ? x.data[j * x.ld + i] : x.data[i * x.ld + j];
}

// Packs rows [i0, i0+mc) x columns [p0, p0+kc) of A into panels of kMR rows, stored k-major:
// panel r holds a[i0 + r*kMR + i][p0 + p] at r*kMR*kc + p*kMR + i. Missing rows are zero.
void pack_a(const MatrixRef& a, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* out) {
  for (int64_t r = 0; r < mc; r += kMR) {
    const int64_t rows = std::min(kMR, mc - r);
    float* panel = out + r * kc;
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t i = 0; i < rows; ++i) panel[p * kMR + i] = element(a, i0 + r + i, p0 + p);
      for (int64_t i = rows; i < kMR; ++i) panel[p * kMR + i] = 0.f;
    }
  }
}

// Packs rows [p0, p0+kc) x columns [j0, j0+nc) of B into panels of kNR columns, stored k-major:
// panel s holds b[p0 + p][j0 + s*kNR + j] at s*kNR*kc + p*kNR + j. Missing columns are zero.
void pack_b(const MatrixRef& b, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* out) {
  for (int64_t s = 0; s < nc; s += kNR) {
    const int64_t cols = std::min(kNR, nc - s);
    float* panel = out + s * kc;
    if (!b.transposed && cols == kNR) {
      for (int64_t p = 0; p < kc; ++p) {
        const float* src = b.data + (p0 + p) * b.ld + j0 + s;
        std::copy(src, src + kNR, panel + p * kNR);
      }
      continue;
    }
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t j = 0; j < cols; ++j) panel[p * kNR + j] = element(b, p0 + p, j0 + s + j);
      for (int64_t j = cols; j < kNR; ++j) panel[p * kNR + j] = 0.f;
    }
  }
}

// tile = sum over p of a_panel[p][i] * b_panel[p][j], for the full kMR x kNR tile.
void micro_kernel(int64_t kc, const float* a_panel, const float* b_panel, float* tile) {
  float acc[kMR][kNR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const float* bp = b_panel + p * kNR;
    const float* ap = a_panel + p * kMR;
    // Full unrolling keeps acc in vector registers; without it g++ -O2 runs at half the speed.
#pragma GCC unroll 16
    for (int64_t i = 0; i < kMR; ++i) {
#pragma GCC unroll 16
      for (int64_t j = 0; j < kNR; ++j) acc[i][j] += ap[i] * bp[j];
    }
  }
  for (int64_t i = 0; i < kMR; ++i)
    for (int64_t j = 0; j < kNR; ++j) tile[i * kNR + j] = acc[i][j];
}

// C[rows x cols] += alpha * tile, for a possibly partial tile at the matrix edge.
void add_tile(const float* tile, int64_t rows, int64_t cols, float alpha, float* c, int64_t ldc) {
  for (int64_t i = 0; i < rows; ++i) {
    float* crow = c + i * ldc;
    for (int64_t j = 0; j < cols; ++j) crow[j] += alpha * tile[i * kNR + j];
  }
}

void scale_c(int64_t m, int64_t n, float beta, float* c, int64_t ldc) {
  if (beta == 1.f) return;
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    if (beta == 0.f) {
      std::fill(row, row + n, 0.f);
    } else {
      for (int64_t j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

}  // namespace

void gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, MatrixRef a, MatrixRef b, float beta,
              float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  scale_c(m, n, beta, c, ldc);
  if (k <= 0 || alpha == 0.f) return;

  const int64_t kc_max = std::min(k, kKC);
  const int64_t mc_max = std::min(m, kMC), nc_max = std::min(n, kNC);
  std::vector<float> a_pack(((mc_max + kMR - 1) / kMR) * kMR * kc_max);
  std::vector<float> b_pack(((nc_max + kNR - 1) / kNR) * kNR * kc_max);
  float tile[kMR * kNR];

  for (int64_t j0 = 0; j0 < n; j0 += kNC) {
    const int64_t nc = std::min(kNC, n - j0);
    for (int64_t p0 = 0; p0 < k; p0 += kKC) {
      const int64_t kc = std::min(kKC, k - p0);
      pack_b(b, p0, kc, j0, nc, b_pack.data());
      for (int64_t i0 = 0; i0 < m; i0 += kMC) {
        const int64_t mc = std::min(kMC, m - i0);
        pack_a(a, i0, mc, p0, kc, a_pack.data());
        for (int64_t s = 0; s < nc; s += kNR) {
          for (int64_t r = 0; r < mc; r += kMR) {
            micro_kernel(kc, a_pack.data() + r * kc, b_pack.data() + s * kc, tile);
            add_tile(tile, std::min(kMR, mc - r), std::min(kNR, nc - s), alpha,
                     c + (i0 + r) * ldc + j0 + s, ldc);
          }
        }
      }
    }
  }
}

}  // namespace collage::ops
