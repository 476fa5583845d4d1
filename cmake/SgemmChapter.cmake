# sgemm_add_chapter(<folder> [TILES <tile> ...] [VARIANTS <name:definitions> ...])
#
# One line per chapter in the top-level CMakeLists.txt. It
#   - builds <folder>/<name>.cu (the folder name without its number) into bin/<folder>,
#     linked to the harness;
#   - registers the chapter's GPU tests (label "gpu"): the shape matrix, alpha/beta, bad device
#     index, a shape too large for memory, and compute-sanitizer memcheck and racecheck;
#   - with -DSGEMM_TUNING=ON, also builds bin/<folder>.tile_<a_b_c...> for each TILES entry
#     ("128,128,8,8,8"): the same source with SGEMM_TILE replaced through a forced include, so
#     tile shapes are compared by measurement without editing the source;
#   - with -DSGEMM_TUNING=ON, also builds bin/<folder>.variant_<name> for each VARIANTS entry
#     ("name:MACRO=value,MACRO2=value"; a value may hold commas, e.g.
#     "pipe2:SGEMM_TILE=128,128,16,32,64,8,8,2,SGEMM_REGISTER_DOUBLE_BUFFER=0"): the same source
#     with those macros defined through a forced include. The variants are a chapter's attribution
#     rows, in the order given, and tiles/<folder>.variants lists them (name, tab, definitions)
#     for scripts/tune.py.
set(SGEMM_BIN_DIR "${PROJECT_BINARY_DIR}/bin")

function(sgemm_add_chapter folder)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "TILES;VARIANTS")
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

    set(manifest "")
    foreach(variant IN LISTS arg_VARIANTS)
      if(NOT variant MATCHES "^([A-Za-z0-9_]+):([A-Za-z_][A-Za-z0-9_]*=.*)$")
        message(FATAL_ERROR "sgemm_add_chapter(${folder}): VARIANTS entry \"${variant}\" is not "
                            "name:MACRO=value[,MACRO2=value...]")
      endif()
      set(name "${CMAKE_MATCH_1}")
      set(definitions "${CMAKE_MATCH_2}")
      # "A=1,2,B=3" -> "#define A 1,2\n#define B 3": a comma starts a new definition only where
      # a macro name and '=' follow it, so tile values keep their commas.
      string(REGEX REPLACE "^([A-Za-z_][A-Za-z0-9_]*)=" "#define \\1 " content "${definitions}")
      string(REGEX REPLACE ",([A-Za-z_][A-Za-z0-9_]*)=" "\n#define \\1 " content "${content}")
      set(header "${PROJECT_BINARY_DIR}/tiles/${folder}.variant_${name}.h")
      file(CONFIGURE OUTPUT "${header}" CONTENT "${content}\n")
      add_executable(${folder}.variant_${name} "${source}")
      target_link_libraries(${folder}.variant_${name} PRIVATE sgemm::harness)
      target_compile_options(${folder}.variant_${name} PRIVATE "SHELL:-include ${header}")
      set_target_properties(${folder}.variant_${name} PROPERTIES
        RUNTIME_OUTPUT_DIRECTORY "${SGEMM_BIN_DIR}")
      string(APPEND manifest "${name}\t${definitions}\n")
    endforeach()
    file(CONFIGURE OUTPUT "${PROJECT_BINARY_DIR}/tiles/${folder}.variants" CONTENT "${manifest}")
  endif()
endfunction()
