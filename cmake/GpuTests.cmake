# GPU tests (CTest label "gpu"): each runs a chapter binary through tests/gpu/run_binary_test.cmake,
# which first asks bin/sgemm_gpu_probe whether a CUDA GPU is present. Without one the test prints
# "SGEMM-SKIP" and CTest reports it as skipped; with one it passes or fails for real.
# CTest's summary lists skipped tests without their reason. A skipping test leaves its reason in
# SGEMM_SKIP_DIR, and CTest runs cmake/SkippedTests.cmake around every test session (through
# CTestCustom.cmake in the build folder): before, to forget old records; after, to print them.
set(SGEMM_SKIP_DIR "${PROJECT_BINARY_DIR}/Testing/Skipped")
if(BUILD_TESTING)
  # CTestCustom.cmake is CMake code: each command line is one string, with its paths quoted inside.
  set(script "\\\"${PROJECT_SOURCE_DIR}/cmake/SkippedTests.cmake\\\"")
  set(command "\\\"${CMAKE_COMMAND}\\\" \\\"-DSKIP_DIR=${SGEMM_SKIP_DIR}\\\"")
  file(CONFIGURE OUTPUT "${PROJECT_BINARY_DIR}/CTestCustom.cmake" CONTENT
    "set(CTEST_CUSTOM_PRE_TEST \"${command} -DCLEAR=ON -P ${script}\")
set(CTEST_CUSTOM_POST_TEST \"${command} -P ${script}\")\n")
endif()

find_program(SGEMM_COMPUTE_SANITIZER compute-sanitizer
  HINTS "${CUDAToolkit_BIN_DIR}" "${CUDAToolkit_BIN_DIR}/../compute-sanitizer")

# The shape matrix: tiny, odd, prime, tall and skinny, wide, K = 1, K not a multiple of 4 or of
# any tile, N not a multiple of 4, exact tile multiples, one large square, and two large odd
# shapes with enough blocks to fill the H100 (a launcher that picks its tile by size takes its
# large-problem path only there).
set(SGEMM_TEST_M "1,1,2,3,7,17,31,33,127,128,129,257,509,1000,1,4099,3,129,130,256,512,1023,2048,63,2053,3001")
set(SGEMM_TEST_N "1,7,3,5,9,33,64,31,131,128,127,255,521,1000,4096,3,4099,131,132,256,384,1025,2048,65,4099,3007")
set(SGEMM_TEST_K "1,1,5,2,13,65,32,64,137,128,129,257,523,1000,4096,129,129,1,13,257,263,1027,2048,4,67,1031")
# Small shapes for the sanitizers (slow tools), checked against the CPU reference so that only the
# chapter's kernels and the harness's fill kernel run under them.
set(SGEMM_SANITIZER_M "1,17,130,129,257,67,2053")
set(SGEMM_SANITIZER_N "1,33,132,131,129,260,4099")
set(SGEMM_SANITIZER_K "1,65,13,1,67,40,67")
# Shapes whose row * leading-dimension products pass 2^31 (A, then B, then C): 64-bit indexing.
set(SGEMM_INDEX64_M "1048577,8,46341")
set(SGEMM_INDEX64_N "8,1048577,46341")
set(SGEMM_INDEX64_K "2100,2100,1")

# sgemm_add_binary_test(<name> COMMAND <args...> [EXPECT_RC n] [EXPECT_REGEX re] [NEEDS gpu|no_gpu|any])
# NEEDS gpu (default): skipped without a GPU, label "gpu". no_gpu: skipped where a GPU is present
# (the no-GPU message), label "host". any: runs everywhere (usage errors), label "host".
function(sgemm_add_binary_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "EXPECT_RC;EXPECT_REGEX;NEEDS" "COMMAND")
  if(NOT DEFINED arg_EXPECT_RC)
    set(arg_EXPECT_RC 0)
  endif()
  if(NOT arg_NEEDS)
    set(arg_NEEDS gpu)
  endif()
  set(label host)
  if(arg_NEEDS STREQUAL "gpu")
    set(label gpu)
  endif()
  string(REPLACE ";" "|" command "${arg_COMMAND}")
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND}
      -DPROBE=$<TARGET_FILE:sgemm_gpu_probe>
      "-DTEST_COMMAND=${command}"
      -DEXPECT_RC=${arg_EXPECT_RC}
      "-DEXPECT_REGEX=${arg_EXPECT_REGEX}"
      -DNEEDS=${arg_NEEDS}
      "-DSKIP_RECORD=${SGEMM_SKIP_DIR}/${name}"
      -P "${PROJECT_SOURCE_DIR}/tests/gpu/run_binary_test.cmake")
  set_tests_properties(${name} PROPERTIES
    LABELS ${label}
    SKIP_REGULAR_EXPRESSION "SGEMM-SKIP"
    RESOURCE_LOCK gpu)
endfunction()

# A sanitizer test on a machine without compute-sanitizer: registered anyway, so the missing tool
# shows up as skipped, with its reason, rather than silently absent.
function(sgemm_add_sanitizer_skip name)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} "-DRECORD=${SGEMM_SKIP_DIR}/${name}"
      "-DREASON=compute-sanitizer not found" -P "${PROJECT_SOURCE_DIR}/cmake/RecordSkip.cmake")
  set_tests_properties(${name} PROPERTIES LABELS gpu SKIP_REGULAR_EXPRESSION "SGEMM-SKIP")
endfunction()

function(sgemm_add_gpu_tests chapter)
  set(bin "$<TARGET_FILE:${chapter}>")
  sgemm_add_binary_test(${chapter}.shapes COMMAND ${bin} --verify-only
    --m ${SGEMM_TEST_M} --n ${SGEMM_TEST_N} --k ${SGEMM_TEST_K})
  sgemm_add_binary_test(${chapter}.alpha_beta COMMAND ${bin} --verify-only --alpha 1.5 --beta -0.75
    --m ${SGEMM_TEST_M} --n ${SGEMM_TEST_N} --k ${SGEMM_TEST_K})
  sgemm_add_binary_test(${chapter}.timed COMMAND ${bin} --size 256,1000 --warmup 1 --samples 5
    EXPECT_REGEX "PASS")
  sgemm_add_binary_test(${chapter}.index64 COMMAND ${bin} --verify-only
    --m ${SGEMM_INDEX64_M} --n ${SGEMM_INDEX64_N} --k ${SGEMM_INDEX64_K})
  sgemm_add_binary_test(${chapter}.bad_device COMMAND ${bin} --device 99 --size 64
    EXPECT_RC 2 EXPECT_REGEX "error: --device 99 does not exist")
  # The other input distributions, verified against the FP64 GEMM (normal) and cuBLAS (wide).
  sgemm_add_binary_test(${chapter}.dist_normal_fp64 COMMAND ${bin} --verify-only --dist normal
    --reference fp64 --m ${SGEMM_SANITIZER_M} --n ${SGEMM_SANITIZER_N} --k ${SGEMM_SANITIZER_K}
    --alpha 1.25 --beta 0.5)
  sgemm_add_binary_test(${chapter}.dist_wide COMMAND ${bin} --verify-only --dist wide
    --size 1024,2047)
  sgemm_add_binary_test(${chapter}.too_large COMMAND ${bin} --size 200000
    EXPECT_RC 3 EXPECT_REGEX "error: shape 200000x200000x200000 needs [0-9.]+ GB of device memory")
  foreach(tool memcheck racecheck)
    if(NOT SGEMM_COMPUTE_SANITIZER)
      sgemm_add_sanitizer_skip(${chapter}.${tool})
      continue()
    endif()
    set(extra "")
    if(tool STREQUAL "memcheck")
      set(extra --leak-check full)
    endif()
    sgemm_add_binary_test(${chapter}.${tool} COMMAND ${SGEMM_COMPUTE_SANITIZER} --tool ${tool}
      ${extra} --error-exitcode 99 ${bin} --verify-only --reference cpu --no-accuracy
      --m ${SGEMM_SANITIZER_M} --n ${SGEMM_SANITIZER_N} --k ${SGEMM_SANITIZER_K}
      --alpha 1.25 --beta 0.5 EXPECT_REGEX "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards")
  endforeach()
  # Chapter 07 only: N odd, shapes for which its launcher (on the H100's model; the host test
  # scripts.shapes checks it) first copies B into rows padded to a multiple of 4 floats
  # (07_any_shape/README.md, "Rows of odd length"): three tiles without split-K, 2 and 20 slices,
  # beta != 0; memcheck on the smallest (every padded row read and written inside the workspace).
  if(chapter STREQUAL "07_any_shape")
    set(padded_m "4095,2047,3001,2049,1025")
    set(padded_n "4097,2049,3001,2051,129")
    set(padded_k "4095,2047,3001,1023,8191")
    sgemm_add_binary_test(${chapter}.padded_b COMMAND ${bin} --verify-only
      --m ${padded_m} --n ${padded_n} --k ${padded_k})
    sgemm_add_binary_test(${chapter}.padded_b_alpha_beta COMMAND ${bin} --verify-only
      --alpha 1.5 --beta -0.75 --m ${padded_m} --n ${padded_n} --k ${padded_k})
    if(NOT SGEMM_COMPUTE_SANITIZER)
      sgemm_add_sanitizer_skip(${chapter}.padded_b_memcheck)
    else()
      sgemm_add_binary_test(${chapter}.padded_b_memcheck COMMAND ${SGEMM_COMPUTE_SANITIZER}
        --tool memcheck --leak-check full --error-exitcode 99 ${bin} --verify-only
        --reference cpu --no-accuracy --m 1025 --n 129 --k 8191 --alpha 1.25 --beta 0.5
        EXPECT_REGEX "ERROR SUMMARY: 0 errors")
    endif()
  endif()
endfunction()
