// SPDX-License-Identifier: MIT
// Error checking for CUDA and cuBLAS calls. The macros only capture the expression text, file and
// line; the functions throw a RuntimeFailure that run_chapter() turns into one line on stderr and
// exit code 3. No hidden return: control leaves through an exception the harness always catches.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace sgemm {

// A CUDA, cuBLAS or resource failure: exit code 3.
class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A request the harness refuses before touching the GPU: exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void check_cuda(cudaError_t status, const char* expr, const char* file, int line);
void check_cublas(cublasStatus_t status, const char* expr, const char* file, int line);

}  // namespace sgemm

#define CUDA_CHECK(expr) ::sgemm::check_cuda((expr), #expr, __FILE__, __LINE__)
#define CUBLAS_CHECK(expr) ::sgemm::check_cublas((expr), #expr, __FILE__, __LINE__)
