// SPDX-License-Identifier: MIT
// The exit codes every chapter binary documents in --help and the README.
#pragma once

namespace sgemm {

enum ExitCode : int {
  kExitPass = 0,         // every shape verified (or verification was switched off)
  kExitWrongResult = 1,  // at least one shape failed verification
  kExitUsage = 2,        // bad option, bad shape, bad device index
  kExitRuntime = 3,      // no GPU, not enough memory, CUDA or cuBLAS failure
};

}  // namespace sgemm
