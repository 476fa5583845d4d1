// SPDX-License-Identifier: MIT
// cp.async, the asynchronous global -> shared copy that chapter 06 teaches (06_double_buffer/
// README.md): a thread issues a copy and goes on; commit groups and wait_group say when copies
// have landed. The tensor-core chapters (08 on) include these wrappers instead of repeating them.
// A copy with valid == false reads nothing and writes zeros (src-size 0): the tile edges.
#pragma once

#include <cuda_runtime.h>

namespace sgemm {

// 4 bytes, through L1 (.ca): any alignment of a float.
__device__ __forceinline__ void cp_async_4(float* smem_dst, const float* gmem_src, bool valid) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(gmem_src)), "r"(valid ? 4 : 0)
               : "memory");
}

// 16 bytes, bypassing L1 (.cg): both addresses 16-byte aligned.
__device__ __forceinline__ void cp_async_16(float* smem_dst, const float* gmem_src, bool valid) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(gmem_src)), "r"(valid ? 16 : 0)
               : "memory");
}

// Closes the group of copies this thread issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most kPending of this thread's committed groups are still in flight. Other
// threads' copies need a barrier besides.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

}  // namespace sgemm
