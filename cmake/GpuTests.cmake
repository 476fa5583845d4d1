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
# large-problem path only there). For the TMA chapters (11 on), whose launchers first copy A
# (rounded to TF32; rows padded when K % 4 != 0) and B (N % 4 != 0) into padded rows
# (common/tma.h, tma_readable): the small tile
# meets A padded, B padded and both; the big tile (66+ blocks of 256 x 128 on the H100) both, at
# 2053 x 4099 x 67 and 3001 x 3007 x 1031. The padded tests below fill in the rest.
set(SGEMM_TEST_M "1,1,2,3,7,17,31,33,127,128,129,257,509,1000,1,4099,3,129,130,256,512,1023,2048,63,2053,3001")
set(SGEMM_TEST_N "1,7,3,5,9,33,64,31,131,128,127,255,521,1000,4096,3,4099,131,132,256,384,1025,2048,65,4099,3007")
set(SGEMM_TEST_K "1,1,5,2,13,65,32,64,137,128,129,257,523,1000,4096,129,129,1,13,257,263,1027,2048,4,67,1031")
# Small shapes for the sanitizers (slow tools), checked against the CPU reference so that only the
# chapter's kernels and the harness's fill kernel run under them. They take the TMA chapters'
# padded copies too: A alone (130 x 132 x 13), and A and B, B's copy after A's in the workspace, on
# the small tile (17 x 33 x 65, 257 x 129 x 67) and on the big one (2053 x 4099 x 67).
set(SGEMM_SANITIZER_M "1,17,130,129,257,67,2053")
set(SGEMM_SANITIZER_N "1,33,132,131,129,260,4099")
set(SGEMM_SANITIZER_K "1,65,13,1,67,40,67")
# Shapes whose row * leading-dimension products pass 2^31 (A, then B, then C): 64-bit indexing.
set(SGEMM_INDEX64_M "1048577,8,46341")
set(SGEMM_INDEX64_N "8,1048577,46341")
set(SGEMM_INDEX64_K "2100,2100,1")

# The GPU suite in parts, each a label beside "gpu", so that one part runs in a few minutes on its
# own (README.md, "The tests"; CMakePresets.json has a test preset per part). The part follows
# from the test's name, so every GPU test gets one, wherever it is registered:
#   gpu_sanitizers    compute-sanitizer runs (names ending in memcheck, racecheck or synccheck):
#                     the slow ones;
#   gpu_tensor_cores  every other test of the chapters from 08 on (the tensor-core chapters),
#                     their accuracy-contract tests included;
#   gpu_cuda_cores    every other test of chapters 00-07.
function(sgemm_gpu_part out name)
  if(name MATCHES "(memcheck|racecheck|synccheck)$")
    set(part gpu_sanitizers)
  elseif(name MATCHES "^([0-9]+)_" AND CMAKE_MATCH_1 GREATER_EQUAL 8)
    set(part gpu_tensor_cores)
  else()
    set(part gpu_cuda_cores)
  endif()
  set(${out} ${part} PARENT_SCOPE)
endfunction()

# sgemm_add_binary_test(<name> COMMAND <args...> [EXPECT_RC n] [EXPECT_REGEX re] [NEEDS gpu|no_gpu|any])
# NEEDS gpu (default): skipped without a GPU, labels "gpu" and its part. no_gpu: skipped where a
# GPU is present (the no-GPU message), label "host". any: runs everywhere (usage errors), label
# "host".
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
    sgemm_gpu_part(part ${name})
    set(label gpu ${part})
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
    LABELS "${label}"
    SKIP_REGULAR_EXPRESSION "SGEMM-SKIP"
    RESOURCE_LOCK gpu)
endfunction()

# A sanitizer test on a machine without compute-sanitizer: registered anyway, so the missing tool
# shows up as skipped, with its reason, rather than silently absent.
function(sgemm_add_sanitizer_skip name)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} "-DRECORD=${SGEMM_SKIP_DIR}/${name}"
      "-DREASON=compute-sanitizer not found" -P "${PROJECT_SOURCE_DIR}/cmake/RecordSkip.cmake")
  sgemm_gpu_part(part ${name})
  set_tests_properties(${name} PROPERTIES LABELS "gpu;${part}"
    SKIP_REGULAR_EXPRESSION "SGEMM-SKIP")
endfunction()

# sgemm_add_sanitizer_test(<name> TOOL <tool> [LEAK_CHECK] COMMAND <program and its arguments...>)
# compute-sanitizer --tool <tool> [--leak-check full] --error-exitcode 99 <program ...>: passes when
# the tool finds nothing, "ERROR SUMMARY: 0 errors" (memcheck, synccheck) or "RACECHECK SUMMARY: 0
# hazards" (racecheck). Where compute-sanitizer is missing, registered as skipped.
function(sgemm_add_sanitizer_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "LEAK_CHECK" "TOOL" "COMMAND")
  if(NOT SGEMM_COMPUTE_SANITIZER)
    sgemm_add_sanitizer_skip(${name})
    return()
  endif()
  set(leak "")
  if(arg_LEAK_CHECK)
    set(leak --leak-check full)
  endif()
  if(arg_TOOL STREQUAL "racecheck")
    set(summary "RACECHECK SUMMARY: 0 hazards")
  else()
    set(summary "ERROR SUMMARY: 0 errors")
  endif()
  sgemm_add_binary_test(${name} COMMAND ${SGEMM_COMPUTE_SANITIZER} --tool ${arg_TOOL} ${leak}
    --error-exitcode 99 ${arg_COMMAND} EXPECT_REGEX "${summary}")
endfunction()

# Whether a chapter reads its tiles with TMA and waits for them on mbarriers: its source includes
# common/tma.h, the one home of the TMA and mbarrier wrappers (a chapter uses an instruction family
# an earlier chapter taught through its common/ header). Read from the source, like the sm_90a
# switch of cmake/Exercises.cmake, rather than declared on the chapter's sgemm_add_chapter line:
# a later Hopper chapter gets these tests by what it includes, with nothing to remember. The source
# is read at configure time; adding the include to a chapter takes effect at the next configure.
function(sgemm_chapter_uses_tma out chapter)
  get_target_property(source ${chapter} SOURCES)
  file(STRINGS "${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"common/tma\\.h\"")
  if(includes)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

function(sgemm_add_gpu_tests chapter)
  set(bin "$<TARGET_FILE:${chapter}>")
  sgemm_chapter_uses_tma(uses_tma ${chapter})
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
  # The far ends of the float range: A within a factor 2 of FLT_MAX, B near 2^-113
  # (common/fill.h). A kernel that rounds, splits or scales an input past FLT_MAX (Inf), or loses
  # B's low bits, fails here. K = 1027: not a multiple of any tile.
  sgemm_add_binary_test(${chapter}.dist_extreme COMMAND ${bin} --verify-only --dist extreme
    --m 256,1000,129 --n 256,1000,4099 --k 256,1000,1027)
  sgemm_add_binary_test(${chapter}.too_large COMMAND ${bin} --size 200000
    EXPECT_RC 3 EXPECT_REGEX "error: shape 200000x200000x200000 needs [0-9.]+ GB of device memory")
  # synccheck (invalid use of barriers and mbarriers) wherever mbarriers are used: the TMA
  # chapters, whose stages are handed between threads and the copy engine by mbarriers alone.
  set(tools memcheck racecheck)
  if(uses_tma)
    list(APPEND tools synccheck)
  endif()
  foreach(tool IN LISTS tools)
    set(leak "")
    if(tool STREQUAL "memcheck")
      set(leak LEAK_CHECK)
    endif()
    sgemm_add_sanitizer_test(${chapter}.${tool} TOOL ${tool} ${leak} COMMAND ${bin} --verify-only
      --reference cpu --no-accuracy --m ${SGEMM_SANITIZER_M} --n ${SGEMM_SANITIZER_N}
      --k ${SGEMM_SANITIZER_K} --alpha 1.25 --beta 0.5)
  endforeach()
  # The TMA chapters: the padded-row shapes the shape matrix leaves out (see above), each with
  # 66+ blocks of 256 x 128 (the big tile on the H100) unless said: A padded alone (K % 4 = 2),
  # B padded alone with N even (the epilogue's 8-byte stores beside a padded B), K = 1 (rows of
  # one float padded to four) with N % 4 = 2, and on the small tile both padded with N even, and
  # K % 4 = 2 and N % 4 = 2 with K shorter than one K tile.
  if(uses_tma)
    set(tma_m "2050,4096,8192,1000,255")
    set(tma_n "4096,2050,1030,1026,130")
    set(tma_k "1026,1024,1,515,6")
    sgemm_add_binary_test(${chapter}.padded COMMAND ${bin} --verify-only
      --m ${tma_m} --n ${tma_n} --k ${tma_k})
    sgemm_add_binary_test(${chapter}.padded_alpha_beta COMMAND ${bin} --verify-only
      --alpha 1.5 --beta -0.75 --m ${tma_m} --n ${tma_n} --k ${tma_k})
  endif()
  # Chapter 07 only: N odd, shapes for which its launcher (on the H100's model; the host test
  # scripts.shapes checks it) first copies B into rows padded to a multiple of 4 floats
  # (07_any_shape/README.md, "Rows of odd length"): 64 x 128, 128 x 64 and 32 x 128 without
  # split-K, 64 x 64 in 20 slices, and 128 x 256 whole (its staged epilogue, "C's rows stay odd")
  # and in 3 slices (split-K runs the padded problem, "With split-K: the padded problem");
  # beta != 0; memcheck on the smallest, the 20 slices (every padded row and padded slice read
  # and written inside the workspace).
  if(chapter STREQUAL "07_any_shape")
    set(padded_m "4095,2047,3001,2049,1025,4097,3153")
    set(padded_n "4097,2049,3001,2051,129,1793,3371")
    set(padded_k "4095,2047,3001,1023,8191,1023,3434")
    sgemm_add_binary_test(${chapter}.padded_b COMMAND ${bin} --verify-only
      --m ${padded_m} --n ${padded_n} --k ${padded_k})
    sgemm_add_binary_test(${chapter}.padded_b_alpha_beta COMMAND ${bin} --verify-only
      --alpha 1.5 --beta -0.75 --m ${padded_m} --n ${padded_n} --k ${padded_k})
    sgemm_add_sanitizer_test(${chapter}.padded_b_memcheck TOOL memcheck LEAK_CHECK COMMAND ${bin}
      --verify-only --reference cpu --no-accuracy --m 1025 --n 129 --k 8191 --alpha 1.25 --beta 0.5)
  endif()
endfunction()

# sgemm_add_contract_tests(<chapter> LIMIT <R> SHAPES <shape options...> DISTS <dist...>
#                          MUTANT <name> <MACRO=value[,MACRO2=value...]> [SUFFIX <s>])
# The accuracy contract of a tensor-core chapter (docs/methodology.md, "The accuracy contract"):
#   <chapter>.accuracy_<dist>   the chapter, --verify-only --accuracy-limit R on the shapes, for
#                               each distribution: its err rms and err max against FP64 within R
#                               times cuBLAS's on the same inputs (cuBLAS in the mode of the
#                               chapter's precision contract);
#   <chapter>.mutant_<name>.accuracy_<dist>
#                               the same run of bin/<chapter>.mutant_<name>, the chapter built with
#                               the macros defined (a plausible regression), which must fail it:
#                               exit code 1 and "accuracy limit exceeded". Without it, a test that
#                               cannot fail would pass just as well.
# SUFFIX names a second contract of the same chapter (other shapes, another mutant): its tests
# are <chapter>.accuracy<s>_<dist> and <chapter>.mutant_<name>.accuracy<s>_<dist>.
# The mutant is built by every build (not only with SGEMM_TUNING), from the chapter's source and
# for the chapter's own CUDA architectures (sm_90a where the chapter has it).
function(sgemm_add_contract_tests chapter)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "LIMIT;SUFFIX" "SHAPES;DISTS;MUTANT")
  list(LENGTH arg_MUTANT mutant_words)
  if(NOT arg_LIMIT OR NOT arg_SHAPES OR NOT arg_DISTS OR NOT mutant_words EQUAL 2)
    message(FATAL_ERROR "sgemm_add_contract_tests(${chapter}): give LIMIT <R> SHAPES <options...> "
                        "DISTS <dist...> MUTANT <name> <MACRO=value,...>")
  endif()
  list(GET arg_MUTANT 0 mutant_name)
  list(GET arg_MUTANT 1 definitions)
  sgemm_definitions_to_defines(defines "${definitions}" "sgemm_add_contract_tests(${chapter})")
  get_target_property(source ${chapter} SOURCES)
  get_target_property(architectures ${chapter} CUDA_ARCHITECTURES)
  set(mutant ${chapter}.mutant_${mutant_name})
  sgemm_add_tuning_binary(${mutant} "${source}" "${defines}" FALSE)
  set_property(TARGET ${mutant} PROPERTY CUDA_ARCHITECTURES ${architectures})

  foreach(dist IN LISTS arg_DISTS)
    set(run --verify-only --accuracy-limit ${arg_LIMIT} --dist ${dist} ${arg_SHAPES})
    set(test accuracy${arg_SUFFIX}_${dist})
    sgemm_add_binary_test(${chapter}.${test} COMMAND $<TARGET_FILE:${chapter}> ${run}
      EXPECT_REGEX "accuracy limit: the chapter's err rms and err max at most")
    sgemm_add_binary_test(${mutant}.${test} COMMAND $<TARGET_FILE:${mutant}> ${run}
      EXPECT_RC 1 EXPECT_REGEX "accuracy limit exceeded: ")
  endforeach()
endfunction()
