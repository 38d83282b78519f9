# Checkpoints of one run only (issue 14), bsprun's side on this machine: checkpoint_runs_test.sh.
foreach(_case earlier two_jobs arguments)
  add_test(NAME launcher_checkpoint_runs_${_case}
    COMMAND ${BSPG_SEALED} --or-unsealed ${CMAKE_CURRENT_SOURCE_DIR}/checkpoint_runs_test.sh
      ${BSPRUN} ${CKPT_JOB} ${_case})
  set_tests_properties(launcher_checkpoint_runs_${_case} PROPERTIES TIMEOUT 240)
  bspg_requires(RESTARTS launcher_checkpoint_runs_${_case})
endforeach()
