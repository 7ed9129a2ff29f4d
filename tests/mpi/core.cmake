# Harness and trace tests (label mpi), included from tests/CMakeLists.txt.
add_executable(test_trace ${CMAKE_CURRENT_LIST_DIR}/test_trace.cpp)
target_link_libraries(test_trace PRIVATE scaleprobe_core sp_mpi_gtest_main)
sp_add_mpi_test(trace test_trace RANKS 1 2 3 5)

# The allreduce harness: verification, statistics across ranks, buffers.
add_executable(test_harness ${CMAKE_CURRENT_LIST_DIR}/test_harness.cpp)
target_link_libraries(test_harness PRIVATE scaleprobe_collectives sp_mpi_gtest_main)
sp_add_mpi_test(harness test_harness RANKS 1 2 3)

# Memory per rank stays bounded whatever the last-level cache (peak RSS of real runs, 1 and 4 ranks).
add_test(NAME peak_memory COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/peak_memory.sh $<TARGET_FILE_DIR:allreduce_perf>
                                       ${SCALEPROBE_MPIEXEC_FLAGS})
set_tests_properties(peak_memory PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 300 ENVIRONMENT "${SCALEPROBE_MPI_TEST_ENV}")

# Checksummed traces (the whole-file digest; Fletcher32 chunks written collectively) and
# corruption detection; an older stored trace (results/) still loads.
add_executable(test_trace_checksum ${CMAKE_CURRENT_LIST_DIR}/test_trace_checksum.cpp)
target_link_libraries(test_trace_checksum PRIVATE scaleprobe_core sp_mpi_gtest_main)
target_compile_definitions(test_trace_checksum PRIVATE SCALEPROBE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
sp_add_mpi_test(trace_checksum test_trace_checksum RANKS 1 2 3 5)
