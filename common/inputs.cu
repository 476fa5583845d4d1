// SPDX-License-Identifier: MIT
#include "common/inputs.h"

#include "common/check.h"

namespace sgemm {
namespace {

__global__ void fill_kernel(float* data, int64_t count, Distribution dist, uint64_t seed,
                            uint64_t stream) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    data[i] = draw(dist, seed, stream, static_cast<uint64_t>(i));
  }
}

}  // namespace

void fill_device(float* data, int64_t count, Distribution dist, uint64_t seed, uint64_t stream,
                 cudaStream_t s) {
  fill_kernel<<<1024, 256, 0, s>>>(data, count, dist, seed, stream);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace sgemm
