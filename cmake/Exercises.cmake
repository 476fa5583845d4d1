# The chapters' exercises, built from the repository (-DSGEMM_EXERCISES=ON).
#
# An exercise that changes code is committed as a unified diff, <chapter>/exercises/<n>.patch,
# against the chapter's source (`git apply <chapter>/exercises/<n>.patch` in a checkout shows it
# in place). This file turns every such patch into bin/<chapter>.exercise_<n>: at build time the
# chapter source is copied into the build tree and the patch applied to the copy, with no fuzz,
# so a patch that no longer matches the chapter stops the build with a message naming it. The
# binary links the harness exactly as the chapter does (cmake/SgemmChapter.cmake).
# scripts/exercises.py builds and runs them with the commands of <chapter>/exercises/commands.json.
#
# Run as a script (cmake -P), it applies one patch:
#   cmake -DSOURCE=<chapter .cu> -DPATCH=<n.patch> -DOUTPUT=<patched .cu> -P Exercises.cmake

if(CMAKE_SCRIPT_MODE_FILE)
  # The copy sits at the source's path relative to the repository root, so the patch's own file
  # names (a/<chapter>/<file>, b/...) apply with -p1, exactly as `git apply` reads them.
  get_filename_component(work "${OUTPUT}.work" ABSOLUTE)
  file(REMOVE_RECURSE "${work}")
  file(RELATIVE_PATH relative "${REPO}" "${SOURCE}")
  get_filename_component(relative_dir "${relative}" DIRECTORY)
  file(COPY "${SOURCE}" DESTINATION "${work}/${relative_dir}")
  find_program(patch_tool patch)
  if(patch_tool)
    execute_process(COMMAND "${patch_tool}" -p1 --fuzz=0 --no-backup-if-mismatch -r - -i "${PATCH}"
      WORKING_DIRECTORY "${work}" RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
  else()
    # git apply outside any repository (the build tree may sit inside one; the ceiling stops
    # git from finding it) behaves like patch and is just as strict.
    find_program(git_tool git REQUIRED)
    get_filename_component(ceiling "${work}" DIRECTORY)
    execute_process(COMMAND "${CMAKE_COMMAND}" -E env "GIT_CEILING_DIRECTORIES=${ceiling}"
      "${git_tool}" apply -p1 "${PATCH}"
      WORKING_DIRECTORY "${work}" RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
  endif()
  if(NOT rc EQUAL 0)
    file(REMOVE "${OUTPUT}")
    file(REMOVE_RECURSE "${work}")
    message(FATAL_ERROR "exercise patch ${PATCH} no longer applies to ${relative}; "
      "re-create it against the chapter's current source (git diff > <n>.patch)\n${log}")
  endif()
  file(COPY_FILE "${work}/${relative}" "${OUTPUT}" ONLY_IF_DIFFERENT)
  file(REMOVE_RECURSE "${work}")
  return()
endif()

option(SGEMM_EXERCISES "Also build the chapters' exercises (bin/<chapter>.exercise_<n>)" OFF)
if(NOT SGEMM_EXERCISES)
  return()
endif()

# `cmake --build <dir> --target exercises` builds them all.
add_custom_target(exercises)

# Every <chapter>/exercises/<n>.patch of the tree, found again when a patch is added or removed.
file(GLOB sgemm_exercise_patches CONFIGURE_DEPENDS
  "${PROJECT_SOURCE_DIR}/[0-9][0-9]_*/exercises/*.patch")
foreach(patch_file IN LISTS sgemm_exercise_patches)
  get_filename_component(number "${patch_file}" NAME_WE)
  get_filename_component(exercise_dir "${patch_file}" DIRECTORY)
  get_filename_component(folder "${exercise_dir}" DIRECTORY)
  get_filename_component(folder "${folder}" NAME)
  string(REGEX REPLACE "^[0-9]+_" "" stem "${folder}")
  set(source "${PROJECT_SOURCE_DIR}/${folder}/${stem}.cu")
  if(NOT number MATCHES "^[0-9]+[a-z]?$" OR NOT EXISTS "${source}")
    message(FATAL_ERROR "${patch_file}: expected <chapter>/exercises/<number>[a-z].patch beside "
      "${folder}/${stem}.cu")
  endif()

  set(target ${folder}.exercise_${number})
  set(patched "${PROJECT_BINARY_DIR}/exercises/${folder}/${number}/${stem}.cu")
  add_custom_command(OUTPUT "${patched}"
    COMMAND "${CMAKE_COMMAND}" -DREPO=${PROJECT_SOURCE_DIR} -DSOURCE=${source}
            -DPATCH=${patch_file} -DOUTPUT=${patched} -P "${CMAKE_CURRENT_LIST_FILE}"
    DEPENDS "${source}" "${patch_file}" "${CMAKE_CURRENT_LIST_FILE}"
    COMMENT "Applying ${folder}/exercises/${number}.patch"
    VERBATIM)
  add_executable(${target} "${patched}")
  target_link_libraries(${target} PRIVATE sgemm::harness)
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${SGEMM_BIN_DIR}")
  # A chapter with wgmma (it includes common/wgmma.h) is built for sm_90a where the list says 90,
  # as its sgemm_add_chapter(... SM90A) line does; its exercises must be too.
  file(STRINGS "${source}" uses_wgmma REGEX "#include \"common/wgmma.h\"")
  if(uses_wgmma)
    sgemm_use_sm90a(${target})
  endif()
  add_dependencies(exercises ${target})
endforeach()
