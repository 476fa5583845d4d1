# CLI11 and GoogleTest: the installed package first (Debian: libcli11-dev, libgtest-dev), else a
# download of a pinned release archive, so a user with internet needs no manual step and an
# offline machine needs only the packages (or -DCMAKE_PREFIX_PATH pointing at them).
#
# The download is one try with short timeouts, not FetchContent's own (which retries for a minute
# and a half and ends in "Build step for cli11 failed"): offline, the user gets the advice below
# within seconds. -DSGEMM_FETCH_DEPS=OFF never touches the network. SGEMM_<NAME>_URL may name a
# mirror or a local copy of the same archive (file:///path/v2.4.2.tar.gz); its SHA256 is checked.
include(FetchContent)

option(SGEMM_FETCH_DEPS "Download CLI11 / GoogleTest when no installed package is found" ON)

set(SGEMM_CLI11_URL "https://github.com/CLIUtils/CLI11/archive/v2.4.2.tar.gz" CACHE STRING
    "CLI11 archive downloaded when the package is not installed")
set(SGEMM_GTEST_URL "https://github.com/google/googletest/archive/refs/tags/v1.15.2.tar.gz"
    CACHE STRING "GoogleTest archive downloaded when the package is not installed")
# The archives' SHA256, as published for these URLs by conan-center-index (CLI11,
# recipes/cli11/all/conandata.yml) and by projects that pin the same GoogleTest URL with Bazel's
# checked http_archive; Homebrew pins the same CLI11 hash for its refs/tags URL.
set(_sgemm_cli11_sha256 f2d893a65c3b1324c50d4e682c0cdc021dd0477ae2c048544f39eed6654b699a)
set(_sgemm_gtest_sha256 7b42b4d6ed48810c5362c265a17faebe90dc2373c885e5216439d37927f02926)

# sgemm_fetch(<name> <url> <sha256> <advice>...): download once into the build folder, verify, and
# make it available with FetchContent (which then only unpacks the local file). Any failure ends
# the configure with one message: what is missing, why, and what to install.
function(sgemm_fetch name url sha256)
  string(JOIN "" advice ${ARGN})
  if(NOT SGEMM_FETCH_DEPS)
    message(FATAL_ERROR "${name} not found, and SGEMM_FETCH_DEPS is OFF. ${advice}")
  endif()
  get_filename_component(file "${url}" NAME)
  set(archive "${CMAKE_BINARY_DIR}/_deps/downloads/${name}-${file}")
  set(have FALSE)
  if(EXISTS "${archive}")
    file(SHA256 "${archive}" existing)
    if(existing STREQUAL sha256)
      set(have TRUE)
    endif()
  endif()
  if(NOT have)
    message(STATUS "${name}: not installed, downloading ${url}")
    # TIMEOUT bounds the whole try (a network that drops packets); an offline machine fails at
    # once on the host name.
    file(DOWNLOAD "${url}" "${archive}.part" STATUS status TIMEOUT 60 INACTIVITY_TIMEOUT 15)
    list(GET status 0 code)
    list(GET status 1 why)
    if(code EQUAL 0)
      file(SHA256 "${archive}.part" got)
      if(NOT got STREQUAL sha256)
        set(code -1)
        set(why "SHA256 ${got}, expected ${sha256}")
      endif()
    endif()
    if(NOT code EQUAL 0)
      file(REMOVE "${archive}.part")
      message(FATAL_ERROR "${name} not found, and downloading ${url} failed (${why}). ${advice} "
                          "(-DSGEMM_FETCH_DEPS=OFF skips the download.)")
    endif()
    file(RENAME "${archive}.part" "${archive}")
  endif()
  FetchContent_Declare(${name} URL "${archive}" URL_HASH SHA256=${sha256}
    DOWNLOAD_EXTRACT_TIMESTAMP TRUE)
  FetchContent_MakeAvailable(${name})
endfunction()

find_package(CLI11 2.0 CONFIG QUIET)
if(CLI11_FOUND)
  message(STATUS "CLI11 ${CLI11_VERSION}: installed package")
else()
  sgemm_fetch(cli11 "${SGEMM_CLI11_URL}" ${_sgemm_cli11_sha256}
    "Install it (Debian/Ubuntu: apt-get install libcli11-dev), or unpack the package and pass "
    "-DCMAKE_PREFIX_PATH=<its usr folder>.")
endif()

if(BUILD_TESTING)
  find_package(GTest CONFIG QUIET)
  if(NOT GTest_FOUND)
    find_package(GTest QUIET)  # FindGTest module: Debian's libgtest-dev without a config file
  endif()
  if(GTest_FOUND)
    message(STATUS "GoogleTest: installed package")
  else()
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
    sgemm_fetch(googletest "${SGEMM_GTEST_URL}" ${_sgemm_gtest_sha256}
      "Install it (Debian/Ubuntu: apt-get install libgtest-dev), or unpack the package and pass "
      "-DCMAKE_PREFIX_PATH=<its usr folder>, or configure without tests: -DBUILD_TESTING=OFF.")
  endif()
endif()
