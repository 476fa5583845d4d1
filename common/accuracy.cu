// SPDX-License-Identifier: MIT
#include "common/accuracy.h"

#include <cmath>
#include <vector>

#include "common/check.h"

namespace sgemm {
namespace {

// A fixed grid and a fixed reduction order: the figures come out the same on every run.
constexpr int kBlocks = 1024;
constexpr int kThreads = 256;

__global__ void to_double(const float* in, double* out, int64_t count, bool absolute,
                          double scale) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const double v = in[i];
    out[i] = scale * (absolute ? fabs(v) : v);
  }
}

__global__ void fill_double(double* out, int64_t count, double value) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    out[i] = value;
  }
}

__global__ void round_kernel(const double* in, float* out, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    out[i] = static_cast<float>(in[i]);
  }
}

struct Partial {
  double sum_sq_err;
  double sum_sq_ref;
  double sum_sq_rel_ab;
  double max_abs_err;
  double max_rel_ab;
  long long nonfinite;
};

__global__ void __launch_bounds__(kThreads)
    error_kernel(const float* C, const double* ref, const double* scale, int64_t count,
                 Partial* partials) {
  Partial p{0, 0, 0, 0, 0, 0};
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const double r = ref[i];
    p.sum_sq_ref += r * r;
    const float c = C[i];
    if (!isfinite(c)) {
      ++p.nonfinite;
      continue;
    }
    const double err = fabs(static_cast<double>(c) - r);
    const double s = scale[i];
    // s == 0 only when every product of the dot product is zero: then any error is infinite.
    const double rel = s > 0 ? err / s : (err > 0 ? INFINITY : 0.0);
    p.sum_sq_err += err * err;
    p.sum_sq_rel_ab += rel * rel;
    p.max_abs_err = fmax(p.max_abs_err, err);
    p.max_rel_ab = fmax(p.max_rel_ab, rel);
  }
  // Tree reduction in shared memory, always in the same order.
  __shared__ Partial shared[kThreads];
  shared[threadIdx.x] = p;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      Partial& a = shared[threadIdx.x];
      const Partial& b = shared[threadIdx.x + half];
      a.sum_sq_err += b.sum_sq_err;
      a.sum_sq_ref += b.sum_sq_ref;
      a.sum_sq_rel_ab += b.sum_sq_rel_ab;
      a.max_abs_err = fmax(a.max_abs_err, b.max_abs_err);
      a.max_rel_ab = fmax(a.max_rel_ab, b.max_rel_ab);
      a.nonfinite += b.nonfinite;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = shared[0];
}

__global__ void differences_kernel(const float* x, const float* y, int64_t count,
                                   unsigned long long* differences) {
  unsigned long long local = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    local += __float_as_uint(x[i]) != __float_as_uint(y[i]);
  }
  // An integer count: the order of the additions does not matter.
  if (local) atomicAdd(differences, local);
}

}  // namespace

size_t Fp64Reference::bytes_needed(const Problem& p) {
  const double m = p.m, n = p.n, k = p.k;
  return static_cast<size_t>(8.0 * (m * k + k * n + 2.0 * m * n));
}

Fp64Reference::Fp64Reference(cublasHandle_t handle, cudaStream_t stream, const Problem& p,
                             const float* A, const float* B, const float* C0)
    : count_(static_cast<int64_t>(p.m) * p.n), c64_(count_), scale_(count_) {
  const int64_t a_count = static_cast<int64_t>(p.m) * p.k;
  const int64_t b_count = static_cast<int64_t>(p.k) * p.n;
  DeviceBuffer<double> a64(a_count), b64(b_count);
  const bool with_c0 = C0 != nullptr && p.beta != 0.0f;
  const double zero = 0.0;
  // Twice: the signed product for C64, then the absolute values for the error scale s.
  for (int pass = 0; pass < 2; ++pass) {
    const bool absolute = pass == 1;
    double* out = absolute ? scale_.get() : c64_.get();
    to_double<<<kBlocks, kThreads, 0, stream>>>(A, a64.get(), a_count, absolute, 1.0);
    to_double<<<kBlocks, kThreads, 0, stream>>>(B, b64.get(), b_count, absolute, 1.0);
    const double beta = absolute ? std::fabs(static_cast<double>(p.beta)) : p.beta;
    if (with_c0) {
      to_double<<<kBlocks, kThreads, 0, stream>>>(C0, out, count_, absolute, 1.0);
    } else {
      fill_double<<<kBlocks, kThreads, 0, stream>>>(out, count_, 0.0);
    }
    CUDA_CHECK(cudaGetLastError());
    const double alpha = absolute ? std::fabs(static_cast<double>(p.alpha)) : p.alpha;
    // Row-major through column-major cuBLAS, as in cublas_gemm.cu: C^T = B^T * A^T.
    CUBLAS_CHECK(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &alpha, b64.get(),
                             p.n, a64.get(), p.k, with_c0 ? &beta : &zero, out, p.n));
  }
  // a64 and b64 are freed on return: wait until the GEMMs no longer read them.
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

void Fp64Reference::round_to_float(float* out, cudaStream_t stream) const {
  round_kernel<<<kBlocks, kThreads, 0, stream>>>(c64_.get(), out, count_);
  CUDA_CHECK(cudaGetLastError());
}

ErrorStats Fp64Reference::errors_of(const float* C, cudaStream_t stream) const {
  DeviceBuffer<Partial> partials(kBlocks);
  error_kernel<<<kBlocks, kThreads, 0, stream>>>(C, c64_.get(), scale_.get(), count_,
                                                 partials.get());
  CUDA_CHECK(cudaGetLastError());
  std::vector<Partial> host(kBlocks);
  CUDA_CHECK(cudaMemcpyAsync(host.data(), partials.get(), kBlocks * sizeof(Partial),
                             cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  Partial total{0, 0, 0, 0, 0, 0};
  for (const Partial& p : host) {  // in block order: the same sums on every run
    total.sum_sq_err += p.sum_sq_err;
    total.sum_sq_ref += p.sum_sq_ref;
    total.sum_sq_rel_ab += p.sum_sq_rel_ab;
    total.max_abs_err = std::fmax(total.max_abs_err, p.max_abs_err);
    total.max_rel_ab = std::fmax(total.max_rel_ab, p.max_rel_ab);
    total.nonfinite += p.nonfinite;
  }
  ErrorStats e;
  const double rms_ref = std::sqrt(total.sum_sq_ref / static_cast<double>(count_));
  e.rms_rel_c = total.sum_sq_ref > 0 ? std::sqrt(total.sum_sq_err / total.sum_sq_ref) : 0.0;
  e.max_rel_c = rms_ref > 0 ? total.max_abs_err / rms_ref : total.max_abs_err;
  const int64_t finite = count_ - total.nonfinite;
  e.rms_rel_ab = finite > 0 ? std::sqrt(total.sum_sq_rel_ab / static_cast<double>(finite)) : 0.0;
  e.max_rel_ab = total.max_rel_ab;
  e.nonfinite = total.nonfinite;
  return e;
}

int64_t count_bit_differences(const float* x, const float* y, int64_t count, cudaStream_t stream) {
  DeviceBuffer<unsigned long long> differences(1);
  CUDA_CHECK(cudaMemsetAsync(differences.get(), 0, sizeof(unsigned long long), stream));
  differences_kernel<<<kBlocks, kThreads, 0, stream>>>(x, y, count, differences.get());
  CUDA_CHECK(cudaGetLastError());
  unsigned long long host = 0;
  CUDA_CHECK(cudaMemcpyAsync(&host, differences.get(), sizeof host, cudaMemcpyDeviceToHost,
                             stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<int64_t>(host);
}

}  // namespace sgemm
