// SPDX-License-Identifier: MIT
// The microbenchmarks' CUDA check: one line naming the call and the error, then exit code 3. They
// are no chapter and do not run through the harness, whose CUDA_CHECK throws to run_chapter().
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace bench {

inline void check(cudaError_t err, const char* expr, const char* file, int line) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "error: %s failed at %s:%d: %s\n", expr, file, line,
                 cudaGetErrorString(err));
    std::exit(3);
  }
}

}  // namespace bench

#define CHECK(expr) ::bench::check((expr), #expr, __FILE__, __LINE__)
