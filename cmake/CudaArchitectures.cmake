# Chooses CMAKE_CUDA_ARCHITECTURES before CUDA is enabled (CMake would otherwise pick the compiler's
# default, an old architecture). Order:
#   1. -DCMAKE_CUDA_ARCHITECTURES=... (or the CUDAARCHS environment variable) given by the user:
#      kept, after checking that every entry is compute capability 8.0 or newer.
#   2. GPUs visible through nvidia-smi: exactly their compute capabilities (sm_90 on an H100).
#   3. No GPU (CI, a laptop): SGEMM_DEFAULT_CUDA_ARCHITECTURES, documented in the README.
# Each entry like "90" makes both sm_90 machine code and compute_90 PTX, so newer GPUs can still
# JIT the PTX. Every configure prints the list and where it came from.
set(SGEMM_DEFAULT_CUDA_ARCHITECTURES "80;86;89;90" CACHE STRING
    "CUDA architectures built when no GPU is visible at configure time")

# The chapters need compute capability 8.0 (cp.async, TF32 tensor cores; the README's requirement).
# Accepted entries: "native" (the GPUs nvcc finds), or <major><minor> with an optional a/f suffix
# and -real/-virtual ("90", "90a", "100f", "90-real"). "all" and "all-major" are refused: they
# include architectures below 8.0 that nvcc still supports.
function(sgemm_check_cuda_architectures archs origin)
  set(fix "pass for example -DCMAKE_CUDA_ARCHITECTURES=90 (H100), \"80;86;89;90\" or native")
  foreach(arch IN LISTS archs)
    if(arch STREQUAL "native")
      continue()
    endif()
    if(arch MATCHES "^all")
      message(FATAL_ERROR "CUDA architectures \"${archs}\" (${origin}): \"${arch}\" includes GPUs "
                          "below compute capability 8.0, which the chapters do not support; ${fix}")
    endif()
    if(NOT arch MATCHES "^([0-9]+)[af]?(-real|-virtual)?$")
      message(FATAL_ERROR "CUDA architectures \"${archs}\" (${origin}): \"${arch}\" is not an "
                          "architecture like 90, 90a, 90-real or native; ${fix}")
    endif()
    if(CMAKE_MATCH_1 LESS 80)
      message(FATAL_ERROR "CUDA architectures \"${archs}\" (${origin}): ${arch} is below compute "
                          "capability 8.0, which the chapters need (cp.async, TF32 tensor cores); "
                          "${fix}")
    endif()
  endforeach()
endfunction()

if(DEFINED CMAKE_CUDA_ARCHITECTURES AND
   CMAKE_CUDA_ARCHITECTURES STREQUAL "${_SGEMM_CUDA_ARCHITECTURES_CHOSEN}")
  # A re-configure: the list this file chose the first time, from the same place.
  set(_origin "${_SGEMM_CUDA_ARCHITECTURES_ORIGIN}")
elseif(DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(_origin "-DCMAKE_CUDA_ARCHITECTURES")
elseif(DEFINED ENV{CUDAARCHS})
  set(_origin "CUDAARCHS environment variable")
  # What project() would take from the environment; set here so that it is checked and printed.
  set(CMAKE_CUDA_ARCHITECTURES "$ENV{CUDAARCHS}" CACHE STRING "CUDA architectures (CUDAARCHS)")
else()
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
    set(_origin "detected with nvidia-smi")
  else()
    set(CMAKE_CUDA_ARCHITECTURES "${SGEMM_DEFAULT_CUDA_ARCHITECTURES}" CACHE STRING
        "CUDA architectures (no GPU visible: default list)")
    set(_origin "no GPU visible: SGEMM_DEFAULT_CUDA_ARCHITECTURES; override with "
                "-DCMAKE_CUDA_ARCHITECTURES=...")
    string(JOIN "" _origin ${_origin})
  endif()
endif()

sgemm_check_cuda_architectures("${CMAKE_CUDA_ARCHITECTURES}" "${_origin}")
message(STATUS "CUDA architectures: ${CMAKE_CUDA_ARCHITECTURES} (${_origin})")
set(_SGEMM_CUDA_ARCHITECTURES_CHOSEN "${CMAKE_CUDA_ARCHITECTURES}" CACHE INTERNAL "")
set(_SGEMM_CUDA_ARCHITECTURES_ORIGIN "${_origin}" CACHE INTERNAL "")

# The Hopper chapters (10 on) use wgmma, which exists only in code compiled for sm_90a, the
# architecture-specific form of sm_90. For their targets every "90" entry becomes "90a": its
# machine code runs on compute capability 9.0 (H100, H200, GH200), as "90"'s did. Its PTX cannot be
# compiled for later GPUs. On any other GPU, or in a build whose list has no 90 ("native" stays as
# it is), the chapter finds no sm_90a code and says so in one error line (common/wgmma.h).
function(sgemm_use_sm90a target)
  set(archs "")
  foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
    if(arch MATCHES "^90(-real|-virtual)?$")
      set(arch "90a${CMAKE_MATCH_1}")
    endif()
    list(APPEND archs "${arch}")
  endforeach()
  set_property(TARGET ${target} PROPERTY CUDA_ARCHITECTURES ${archs})
endfunction()
