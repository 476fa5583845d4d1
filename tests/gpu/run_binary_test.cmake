# Runs one chapter-binary test (see cmake/GpuTests.cmake). Inputs:
#   PROBE         bin/sgemm_gpu_probe: exit 0 when a CUDA GPU is usable
#   TEST_COMMAND  the command, arguments separated by "|"
#   EXPECT_RC     the exit code the command must return
#   EXPECT_REGEX  optional: the output must match it
#   NEEDS         gpu: skipped without a GPU; no_gpu: skipped with one; any: always runs
#   SKIP_RECORD   where a skip leaves its reason (cmake/SkippedTests.cmake prints them)
macro(skip reason)
  message("SGEMM-SKIP: ${reason}")
  if(SKIP_RECORD)
    file(WRITE "${SKIP_RECORD}" "${reason}\n")
  endif()
  return()
endmacro()

execute_process(COMMAND "${PROBE}" RESULT_VARIABLE probe_rc OUTPUT_QUIET ERROR_QUIET)
if(NEEDS STREQUAL "any")
elseif(NEEDS STREQUAL "no_gpu")
  if(probe_rc EQUAL 0)
    skip("a CUDA GPU is present; this test is for machines without one")
  endif()
elseif(NOT probe_rc EQUAL 0)
  skip("no CUDA GPU on this machine")
endif()

string(REPLACE "|" ";" command "${TEST_COMMAND}")
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
# A chapter this GPU cannot run (the Hopper chapters on another GPU, or a build without sm_90a
# code) says so in one line and exits with 3 (common/harness.h, Chapter::unsupported): its tests
# skip with that line as the reason.
if(rc STREQUAL "3" AND "${out}${err}" MATCHES "error: ([0-9A-Za-z_]+ needs [^\n]*)")
  set(reason "${CMAKE_MATCH_1}")
  if(NOT (EXPECT_RC STREQUAL "3" AND EXPECT_REGEX AND "${out}${err}" MATCHES "${EXPECT_REGEX}"))
    skip("${reason}")
  endif()
endif()
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}")
endif()
if(EXPECT_REGEX AND NOT "${out}${err}" MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match: ${EXPECT_REGEX}")
endif()
