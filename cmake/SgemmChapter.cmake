# sgemm_add_chapter(<folder> [SM90A] [TILES <tile> ...] [VARIANTS <name:definitions> ...])
#
# One line per chapter in the top-level CMakeLists.txt. It
#   - builds <folder>/<name>.cu (the folder name without its number) into bin/<folder>,
#     linked to the harness;
#   - registers the chapter's GPU tests (label "gpu", and the label of their part of the suite:
#     cmake/GpuTests.cmake): the shape matrix, alpha/beta, bad device index, a shape too large
#     for memory, the input distributions, and compute-sanitizer memcheck and racecheck;
#   - with -DSGEMM_TUNING=ON, also builds bin/<folder>.tile_<a_b_c...> for each TILES entry
#     ("128,128,8,8,8"): the same source with SGEMM_TILE replaced through a forced include, so
#     tile shapes are compared by measurement without editing the source;
#   - with -DSGEMM_TUNING=ON, also builds bin/<folder>.variant_<name> for each VARIANTS entry
#     ("name:MACRO=value,MACRO2=value"; a value may hold commas, e.g.
#     "pipe2:SGEMM_TILE=128,128,16,32,64,8,8,2,SGEMM_REGISTER_DOUBLE_BUFFER=0"): the same source
#     with those macros defined through a forced include. The variants are a chapter's attribution
#     rows, in the order given, and tiles/<folder>.variants lists them (name, tab, definitions)
#     for scripts/tune.py.
#   - with SM90A, compiles every one of these binaries for sm_90a where the list says 90
#     (cmake/CudaArchitectures.cmake, sgemm_use_sm90a): the chapter has a wgmma kernel.
set(SGEMM_BIN_DIR "${PROJECT_BINARY_DIR}/bin")

# One binary built from a chapter's source with `defines` (#define lines) in a header forced in
# front of it, so no source is edited: the tuning build's tiles and variants, and the mutants of
# the accuracy-contract tests (cmake/GpuTests.cmake, sgemm_add_contract_tests), which are always
# built.
function(sgemm_add_tuning_binary target source defines sm90a)
  set(header "${PROJECT_BINARY_DIR}/tiles/${target}.h")
  file(CONFIGURE OUTPUT "${header}" CONTENT "${defines}\n")
  add_executable(${target} "${source}")
  target_link_libraries(${target} PRIVATE sgemm::harness)
  target_compile_options(${target} PRIVATE "SHELL:-include ${header}")
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${SGEMM_BIN_DIR}")
  if(sm90a)
    sgemm_use_sm90a(${target})
  endif()
endfunction()

# "A=1,2,B=3" -> "#define A 1,2\n#define B 3" in <out>: a comma starts a new definition only where
# a macro name and '=' follow it, so tile values keep their commas. <context> names the caller in
# the error message for text that is not MACRO=value[,MACRO2=value...].
function(sgemm_definitions_to_defines out definitions context)
  if(NOT definitions MATCHES "^[A-Za-z_][A-Za-z0-9_]*=")
    message(FATAL_ERROR "${context}: \"${definitions}\" is not MACRO=value[,MACRO2=value...]")
  endif()
  string(REGEX REPLACE "^([A-Za-z_][A-Za-z0-9_]*)=" "#define \\1 " content "${definitions}")
  string(REGEX REPLACE ",([A-Za-z_][A-Za-z0-9_]*)=" "\n#define \\1 " content "${content}")
  set(${out} "${content}" PARENT_SCOPE)
endfunction()

function(sgemm_add_chapter folder)
  cmake_parse_arguments(PARSE_ARGV 1 arg "SM90A" "" "TILES;VARIANTS")
  string(REGEX REPLACE "^[0-9]+_" "" stem "${folder}")
  set(source "${PROJECT_SOURCE_DIR}/${folder}/${stem}.cu")
  if(NOT EXISTS "${source}")
    message(FATAL_ERROR "sgemm_add_chapter(${folder}): ${source} does not exist")
  endif()

  add_executable(${folder} "${source}")
  target_link_libraries(${folder} PRIVATE sgemm::harness)
  set_target_properties(${folder} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${SGEMM_BIN_DIR}")
  set_property(GLOBAL APPEND PROPERTY SGEMM_CHAPTERS ${folder})
  if(arg_SM90A)
    sgemm_use_sm90a(${folder})
  endif()

  if(BUILD_TESTING)
    sgemm_add_gpu_tests(${folder})
  endif()

  if(SGEMM_TUNING)
    foreach(tile IN LISTS arg_TILES)
      string(REGEX REPLACE "[ ,]+" "_" suffix "${tile}")
      sgemm_add_tuning_binary(${folder}.tile_${suffix} "${source}" "#define SGEMM_TILE ${tile}"
                              ${arg_SM90A})
    endforeach()

    set(manifest "")
    foreach(variant IN LISTS arg_VARIANTS)
      if(NOT variant MATCHES "^([A-Za-z0-9_]+):([A-Za-z_][A-Za-z0-9_]*=.*)$")
        message(FATAL_ERROR "sgemm_add_chapter(${folder}): VARIANTS entry \"${variant}\" is not "
                            "name:MACRO=value[,MACRO2=value...]")
      endif()
      set(name "${CMAKE_MATCH_1}")
      set(definitions "${CMAKE_MATCH_2}")
      sgemm_definitions_to_defines(content "${definitions}" "sgemm_add_chapter(${folder})")
      sgemm_add_tuning_binary(${folder}.variant_${name} "${source}" "${content}" ${arg_SM90A})
      string(APPEND manifest "${name}\t${definitions}\n")
    endforeach()
    file(CONFIGURE OUTPUT "${PROJECT_BINARY_DIR}/tiles/${folder}.variants" CONTENT "${manifest}")
  endif()
endfunction()
