# Whole lines: a line one process prints is never cut by another's, nothing is lost, and
# --tag-output names each line's process; at p = 1..4 and in master mode (whole_lines_test.sh).
# Included from CMakeLists.txt (BSPRUN). Where bsprun cannot keep the processes' output apart
# (launcher/starting/mpi.h: Open MPI 5 for now; the processes Open MPI 4's master spawns) the tests are
# registered disabled.
add_executable(launcher_long_lines progs/long_lines.c)
target_link_libraries(launcher_long_lines PRIVATE bspg)
set(_whole_lines_local TRUE)
set(_whole_lines_master TRUE)
if(BSPG_MPI_FAMILY STREQUAL openmpi)
  set(_whole_lines_master FALSE)
  if(BSPG_MPI_MAJOR GREATER 4)
    set(_whole_lines_local FALSE)
  endif()
endif()
foreach(_p 1 2 3 4)
  foreach(_how p tagged master master_tagged)
    set(_name launcher_whole_lines_${_how}_${_p})
    set(_opts -p ${_p})
    if(_how MATCHES master)
      set(_opts --max-procs 4)
    endif()
    if(_how MATCHES tagged)
      list(APPEND _opts --tag-output)
    endif()
    add_test(NAME ${_name} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/whole_lines_test.sh ${BSPRUN}
             $<TARGET_FILE:launcher_long_lines> ${_p} ${_opts})
    set_tests_properties(${_name} PROPERTIES TIMEOUT 180)
    if(_how MATCHES master)
      bspg_requires(SPAWNS ${_name})
      if(NOT _whole_lines_master)
        set_tests_properties(${_name} PROPERTIES DISABLED TRUE)
      endif()
    elseif(NOT _whole_lines_local)
      set_tests_properties(${_name} PROPERTIES DISABLED TRUE)
    endif()
  endforeach()
endforeach()
# --tag-output: unfinished last lines too start on lines of their own, each with its prefix.
add_executable(launcher_last_words progs/last_words.c)
target_link_libraries(launcher_last_words PRIVATE bspg)
bsprun_test(tag_output_last_words --timeout 60
  --count "^\\[[0-3]\\] last words of [0-3]$" 4 --count "^\\[[0-3]\\] last errors of [0-3]$" 4
  --not-out "of [0-9][^ ]" -- ${BSPRUN} -p 4 --tag-output $<TARGET_FILE:launcher_last_words>)
if(NOT _whole_lines_local)
  set_tests_properties(launcher_tag_output_last_words PROPERTIES DISABLED TRUE)
endif()
# --tag-output where the output is not kept apart: one line, exit status 2.
if(BSPG_MPI_FAMILY STREQUAL openmpi AND BSPG_MPI_MAJOR EQUAL 4)
  bsprun_test(tag_output_master_refused --exit 2
    --out "^bsprun: --tag-output is not available in master mode with Open MPI" --not-out "^a"
    --timeout 20 -- ${BSPRUN} --tag-output --max-procs 2 $<TARGET_FILE:launcher_long_lines> 2)
endif()
# The manual says how output is passed on, and what --tag-output does.
bsprun_test(help_output --out "^    Output\\. The starter forwards each process's output in pieces"
  --out "^    --tag-output$" --out "with \"\\[PID\\] \", its$" --timeout 20 -- ${BSPRUN} --help all)
