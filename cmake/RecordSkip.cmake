# The test side of cmake/SkippedTests.cmake: a skipped test prints "SGEMM-SKIP: <reason>" (CTest's
# SKIP_REGULAR_EXPRESSION) and leaves its reason in RECORD, a file named after the test.
#   cmake -DRECORD=<file> -DREASON=<text> -P RecordSkip.cmake
#       skip at once (a tool found missing at configure time)
#   cmake -DRECORD=<file> -DRUN=<command|arg|...> -P RecordSkip.cmake
#       run a command that exits 77 to skip, its last output line saying why ("<reason>: skipped",
#       the scripts' tests); any other non-zero exit code fails the test
if(DEFINED RUN)
  string(REPLACE "|" ";" command "${RUN}")
  execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT rc EQUAL 77)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "exit code ${rc}")
    endif()
    return()
  endif()
  string(STRIP "${out}" out)
  string(FIND "${out}" "\n" newline REVERSE)
  math(EXPR start "${newline} + 1")
  string(SUBSTRING "${out}" ${start} -1 REASON)
  string(REGEX REPLACE ": skipped$" "" REASON "${REASON}")
  if(NOT REASON)
    set(REASON "exit code 77, no reason given")
  endif()
endif()
message("SGEMM-SKIP: ${REASON}")
file(WRITE "${RECORD}" "${REASON}\n")
