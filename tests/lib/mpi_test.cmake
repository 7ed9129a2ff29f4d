# sp_add_mpi_test(NAME target RANKS 1 2 3 ... [ARGS ...]): one CTest per rank count, label "mpi",
# holding as many of ctest's -j slots as it has ranks (a run wider than -j runs alone). Uses
# MPIEXEC_EXECUTABLE, MPIEXEC_NUMPROC_FLAG, SCALEPROBE_MPIEXEC_FLAGS and SCALEPROBE_MPI_TEST_ENV.
# The target links sp_mpi_gtest_main (tests/mpi/mpi_gtest_main.cpp), whose exit code, agreed across
# ranks, is the verdict: a failure on any rank is Failed, even beside a skip; else a skip on any
# rank is Not Run (SKIP_RETURN_CODE 77); else Passed. Not a SKIP_REGULAR_EXPRESSION: one skipped
# test would turn the entry's failures into Skipped. Checked by tests/mpi/skip_verdict.sh.
function(sp_add_mpi_test name target)
  cmake_parse_arguments(T "" "" "RANKS;ARGS" ${ARGN})
  foreach(n IN LISTS T_RANKS)
    add_test(NAME ${name}.np${n}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${SCALEPROBE_MPIEXEC_FLAGS}
                     $<TARGET_FILE:${target}> ${T_ARGS})
    set_tests_properties(${name}.np${n} PROPERTIES LABELS mpi PROCESSORS ${n} TIMEOUT 600
                         ENVIRONMENT "${SCALEPROBE_MPI_TEST_ENV}"
                         SKIP_RETURN_CODE 77)
  endforeach()
endfunction()
