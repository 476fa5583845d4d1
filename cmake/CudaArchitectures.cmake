# Chooses CMAKE_CUDA_ARCHITECTURES before CUDA is enabled (CMake would otherwise pick the compiler's
# default, an old architecture). Order:
#   1. -DCMAKE_CUDA_ARCHITECTURES=... given by the user: kept as is.
#   2. GPUs visible through nvidia-smi: exactly their compute capabilities (sm_90 on an H100).
#   3. No GPU (CI, a laptop): SGEMM_DEFAULT_CUDA_ARCHITECTURES, documented in the README.
# Each entry like "90" makes both sm_90 machine code and compute_90 PTX, so newer GPUs can still
# JIT the PTX.
set(SGEMM_DEFAULT_CUDA_ARCHITECTURES "80;86;89;90" CACHE STRING
    "CUDA architectures built when no GPU is visible at configure time")

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  find_program(SGEMM_NVIDIA_SMI nvidia-smi)
  set(_detected "")
  if(SGEMM_NVIDIA_SMI)
    execute_process(
      COMMAND ${SGEMM_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
      OUTPUT_VARIABLE _caps RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_rc EQUAL 0 AND _caps MATCHES "^[0-9]")
      string(REPLACE "\n" ";" _caps "${_caps}")
      foreach(_cap IN LISTS _caps)
        string(STRIP "${_cap}" _cap)
        string(REPLACE "." "" _cap "${_cap}")
        list(APPEND _detected ${_cap})
      endforeach()
      list(REMOVE_DUPLICATES _detected)
    endif()
  endif()
  if(_detected)
    set(CMAKE_CUDA_ARCHITECTURES "${_detected}" CACHE STRING "CUDA architectures (detected)")
    message(STATUS "CUDA architectures: ${_detected} (detected with nvidia-smi)")
  else()
    set(CMAKE_CUDA_ARCHITECTURES "${SGEMM_DEFAULT_CUDA_ARCHITECTURES}" CACHE STRING
        "CUDA architectures (no GPU visible: default list)")
    message(STATUS "CUDA architectures: ${SGEMM_DEFAULT_CUDA_ARCHITECTURES} "
                   "(no GPU visible; override with -DCMAKE_CUDA_ARCHITECTURES=...)")
  endif()
endif()
