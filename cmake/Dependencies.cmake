# CLI11 and GoogleTest: the installed package first (Debian: libcli11-dev, libgtest-dev), else
# FetchContent, so a user with internet needs no manual step and an offline machine needs only
# the packages (or -DCMAKE_PREFIX_PATH pointing at them).
include(FetchContent)

find_package(CLI11 2.0 CONFIG QUIET)
if(CLI11_FOUND)
  message(STATUS "CLI11 ${CLI11_VERSION}: installed package")
else()
  message(STATUS "CLI11: not installed, fetching v2.4.2")
  FetchContent_Declare(cli11
    URL https://github.com/CLIUtils/CLI11/archive/refs/tags/v2.4.2.tar.gz
    DOWNLOAD_EXTRACT_TIMESTAMP TRUE)
  FetchContent_MakeAvailable(cli11)
endif()

if(BUILD_TESTING)
  find_package(GTest CONFIG QUIET)
  if(NOT GTest_FOUND)
    find_package(GTest QUIET)  # FindGTest module: Debian's libgtest-dev without a config file
  endif()
  if(GTest_FOUND)
    message(STATUS "GoogleTest: installed package")
  else()
    message(STATUS "GoogleTest: not installed, fetching v1.15.2")
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
    FetchContent_Declare(googletest
      URL https://github.com/google/googletest/archive/refs/tags/v1.15.2.tar.gz
      DOWNLOAD_EXTRACT_TIMESTAMP TRUE)
    FetchContent_MakeAvailable(googletest)
  endif()
endif()
