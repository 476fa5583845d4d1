# Why tests were skipped, printed after CTest's summary (which lists them as "(Skipped)" without a
# reason). A skipping test writes one record, <SKIP_DIR>/<test name>, holding its reason
# (tests/gpu/run_binary_test.cmake, cmake/RecordSkip.cmake); CTest runs this script around every
# test session through CTestCustom.cmake in the build folder (written by cmake/GpuTests.cmake):
#   cmake -DSKIP_DIR=<dir> -DCLEAR=ON -P SkippedTests.cmake   before the tests: forget old records
#   cmake -DSKIP_DIR=<dir> -P SkippedTests.cmake              after them: print the reasons
# (CTest's own log, Testing/Temporary/LastTest.log, is only complete after this script has run.)
# Tests skipped for the same reason are counted together, and the first few are named; CTest's
# list just above names them all.
if(CLEAR)
  file(REMOVE_RECURSE "${SKIP_DIR}")
  return()
endif()
file(GLOB records LIST_DIRECTORIES false RELATIVE "${SKIP_DIR}" "${SKIP_DIR}/*")
if(NOT records)
  return()
endif()

set(reasons "")
foreach(test IN LISTS records)
  file(READ "${SKIP_DIR}/${test}" reason)
  string(STRIP "${reason}" reason)
  string(MD5 key "${reason}")
  if(NOT DEFINED reason_${key})
    set(reason_${key} "${reason}")
    list(APPEND reasons ${key})
  endif()
  list(APPEND tests_${key} "${test}")
endforeach()

set(kShown 4)
message("Why tests were skipped:")
foreach(key IN LISTS reasons)
  list(LENGTH tests_${key} count)
  list(SUBLIST tests_${key} 0 ${kShown} shown)
  list(JOIN shown ", " names)
  if(count GREATER kShown)
    math(EXPR more "${count} - ${kShown}")
    string(APPEND names ", ... and ${more} more")
  endif()
  message("  ${count} skipped: ${reason_${key}} (${names})")
endforeach()
