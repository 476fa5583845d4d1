# sgemm_add_chapter(<folder> [TILES <tile> ...])
#
# One line per chapter in the top-level CMakeLists.txt. It
#   - builds <folder>/<name>.cu (the folder name without its number) into bin/<folder>,
#     linked to the harness;
#   - registers the chapter's GPU tests (label "gpu"): the shape matrix, alpha/beta, bad device
#     index, a shape too large for memory, and compute-sanitizer memcheck and racecheck;
#   - with -DSGEMM_TUNING=ON, also builds bin/<folder>.tile_<a_b_c...> for each TILES entry
#     ("128,128,8,8,8"): the same source with SGEMM_TILE replaced through a forced include, so
#     tile shapes are compared by measurement without editing the source.
set(SGEMM_BIN_DIR "${PROJECT_BINARY_DIR}/bin")

function(sgemm_add_chapter folder)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "TILES")
  string(REGEX REPLACE "^[0-9]+_" "" stem "${folder}")
  set(source "${PROJECT_SOURCE_DIR}/${folder}/${stem}.cu")
  if(NOT EXISTS "${source}")
    message(FATAL_ERROR "sgemm_add_chapter(${folder}): ${source} does not exist")
  endif()

  add_executable(${folder} "${source}")
  target_link_libraries(${folder} PRIVATE sgemm::harness)
  set_target_properties(${folder} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${SGEMM_BIN_DIR}")
  set_property(GLOBAL APPEND PROPERTY SGEMM_CHAPTERS ${folder})

  if(BUILD_TESTING)
    sgemm_add_gpu_tests(${folder})
  endif()

  if(SGEMM_TUNING)
    foreach(tile IN LISTS arg_TILES)
      string(REGEX REPLACE "[ ,]+" "_" suffix "${tile}")
      set(header "${PROJECT_BINARY_DIR}/tiles/${folder}.tile_${suffix}.h")
      file(CONFIGURE OUTPUT "${header}" CONTENT "#define SGEMM_TILE ${tile}\n")
      add_executable(${folder}.tile_${suffix} "${source}")
      target_link_libraries(${folder}.tile_${suffix} PRIVATE sgemm::harness)
      target_compile_options(${folder}.tile_${suffix} PRIVATE "SHELL:-include ${header}")
      set_target_properties(${folder}.tile_${suffix} PROPERTIES
        RUNTIME_OUTPUT_DIRECTORY "${SGEMM_BIN_DIR}")
    endforeach()
  endif()
endfunction()
