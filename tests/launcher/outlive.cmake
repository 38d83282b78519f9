# Nothing outlives bsprun (issue 14): stops leave nothing running and no file behind, a stopped
# (SIGSTOP) process is lost like a silent host, and bsprun --clean-up ends what a killed bsprun
# left. Included from CMakeLists.txt (BSPRUN, CKPT_JOB, _emulated_env, bspg_emulated_scenarios).

# This machine alone (outlive_test.sh): SIGTERM, and a frozen process with --restarts.
foreach(_case sigterm frozen)
  add_test(NAME launcher_outlive_local_${_case}
    COMMAND ${BSPG_SEALED} --or-unsealed ${CMAKE_CURRENT_SOURCE_DIR}/outlive_test.sh ${_case} ${BSPRUN} ${CKPT_JOB})
  set_tests_properties(launcher_outlive_local_${_case} PROPERTIES TIMEOUT 120)
  bspg_requires(RESTARTS launcher_outlive_local_${_case})
endforeach()

# Emulated hosts (outlive_e2e.sh).
bspg_emulated_scenarios(launcher_outlive_ outlive_e2e.sh 240
  "${_emulated_env};CKPT_JOB=$<TARGET_FILE:launcher_ckpt_job>"
  frozen_rank sigterm sigterm_restart clean_up)
bspg_requires(RESTARTS launcher_outlive_sigterm_restart launcher_outlive_frozen_rank)

# Unit tests: how long a process counts as stopped, the list of a job's processes, --clean-up's
# script and lines.
add_executable(outlive_unit_tests cleanup_test.cpp)
target_link_libraries(outlive_unit_tests PRIVATE bsprun_core GTest::gtest_main)
gtest_discover_tests(outlive_unit_tests TEST_PREFIX "launcher_outlive." DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 60)
