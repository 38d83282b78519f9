# bspg groups (bspg.h): group-local supersteps, and their misuse.
foreach(_prog group_sync group_outside)
  add_executable(${_prog} ${CMAKE_CURRENT_SOURCE_DIR}/groups/${_prog}.c)
  target_link_libraries(${_prog} PRIVATE bspg)
endforeach()
foreach(_p 1 2 3 4)
  add_test(NAME groups.sync.p${_p} COMMAND ${BSPG_EXPECT} --timeout 60 --out "PASS group_sync" --not-out FAIL --
    ${BSPG_TEST_MPIRUN} -np ${_p} $<TARGET_FILE:group_sync>)
  set_tests_properties(groups.sync.p${_p} PROPERTIES TIMEOUT 90)
endforeach()
add_test(NAME groups.put_outside_group.p2 COMMAND ${BSPG_EXPECT} --timeout 60 --exit nonzero
  --out "bspg_group_sync: .*process 1, which is not in the group" --count "bspg_group_sync:" 1 --
  ${BSPG_TEST_MPIRUN} -np 2 $<TARGET_FILE:group_outside>)
set_tests_properties(groups.put_outside_group.p2 PROPERTIES TIMEOUT 90)
