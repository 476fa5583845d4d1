// SPDX-License-Identifier: MIT
// Exit 0 when a CUDA GPU is usable, 1 otherwise: lets GPU tests skip on machines without one.
#include <cuda_runtime.h>

int main() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0 ? 0 : 1;
}
