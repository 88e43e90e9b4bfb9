// libsvm's pairwise coupling (Wu, Lin and Weng 2004, "Probability estimates for multi-class
// classification by pairwise coupling", method 2), in float32 with the stopping rule ONNX
// Runtime's SVMClassifier uses (at most 100 sweeps, stop when max |Qp_i - pQp| < 0.005 / k):
// shared by the reference kernel of SVMPairwiseCoupling (lib/ops) and the dynamic runtime module,
// so that both compute what ONNX Runtime does. Plain C++ over arrays.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace collage::algorithms {

// `r`: the k (k - 1) / 2 pairwise probabilities r_ij (class i beats class j) of one row, for
// i < j in order (0,1), (0,2), ..., (1,2), ...; `p` gets the k class probabilities. `q` and `qp`
// are scratch space (resized here).
inline void pairwise_coupling(int64_t k, const float* r, float* p, std::vector<float>& q,
                              std::vector<float>& qp) {
  const auto n = static_cast<size_t>(k);
  q.assign(n * n, 0.f);
  qp.assign(n, 0.f);
  // rm(i, j): r_ij, with r_ji = 1 - r_ij.
  std::vector<float> rm(n * n, 0.f);
  for (size_t i = 0, at = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j, ++at) {
      rm[i * n + j] = r[at];
      rm[j * n + i] = 1.f - r[at];
    }
  for (size_t t = 0; t < n; ++t) {
    p[t] = 1.f / static_cast<float>(k);
    for (size_t j = 0; j < t; ++j) {
      q[t * n + t] += rm[j * n + t] * rm[j * n + t];
      q[t * n + j] = q[j * n + t];
    }
    for (size_t j = t + 1; j < n; ++j) {
      q[t * n + t] += rm[j * n + t] * rm[j * n + t];
      q[t * n + j] = -rm[j * n + t] * rm[t * n + j];
    }
  }
  const float eps = 0.005f / static_cast<float>(k);
  for (int iter = 0; iter < 100; ++iter) {
    float pqp = 0.f;
    for (size_t t = 0; t < n; ++t) {
      qp[t] = 0.f;
      for (size_t j = 0; j < n; ++j) qp[t] += q[t * n + j] * p[j];
      pqp += p[t] * qp[t];
    }
    float worst = 0.f;
    for (size_t t = 0; t < n; ++t) worst = std::fmax(worst, std::fabs(qp[t] - pqp));
    if (worst < eps) break;
    for (size_t t = 0; t < n; ++t) {
      const float step = (pqp - qp[t]) / q[t * n + t];
      p[t] += step;
      pqp = (pqp + step * (step * q[t * n + t] + 2 * qp[t])) / (1 + step) / (1 + step);
      for (size_t j = 0; j < n; ++j) {
        qp[j] = (qp[j] + step * q[t * n + j]) / (1 + step);
        p[j] /= (1 + step);
      }
    }
  }
}

}  // namespace collage::algorithms
