// SPDX-License-Identifier: MIT
// The functions behind CUDA_CHECK and CUBLAS_CHECK (common/check.h).
#include "common/check.h"

#include <string>

namespace sgemm {

void check_cuda(cudaError_t status, const char* expr, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw RuntimeFailure(std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status) +
                       " (" + expr + " at " + file + ":" + std::to_string(line) + ")");
}

void check_cublas(cublasStatus_t status, const char* expr, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw RuntimeFailure(std::string(cublasGetStatusName(status)) + ": " +
                       cublasGetStatusString(status) + " (" + expr + " at " + file + ":" +
                       std::to_string(line) + ")");
}

}  // namespace sgemm
