# The data-parallel engine end to end (label mpi): a plain gtest binary that launches gpt_train
# under mpirun at 1-4 ranks, so one test can compare runs at different rank counts.
add_executable(test_dp_train ${CMAKE_CURRENT_LIST_DIR}/test_dp_train.cpp)
target_link_libraries(test_dp_train PRIVATE scaleprobe_core GTest::gtest_main)
add_dependencies(test_dp_train gpt_train)
string(REPLACE ";" " " _sp_dp_env "${SCALEPROBE_MPI_TEST_ENV}")
string(REPLACE ";" " " _sp_dp_flags "${SCALEPROBE_MPIEXEC_FLAGS}")
target_compile_definitions(test_dp_train PRIVATE
  GPT_TRAIN_PATH="$<TARGET_FILE:gpt_train>"
  SP_MPIEXEC="${MPIEXEC_EXECUTABLE}"
  SP_MPIEXEC_NUMPROC_FLAG="${MPIEXEC_NUMPROC_FLAG}"
  SP_MPIEXEC_FLAGS="${_sp_dp_flags}"
  SP_MPI_TEST_ENV="${_sp_dp_env}")
gtest_discover_tests(test_dp_train PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 600)

# resnet_train on the engine (label mpi): strong scaling with frozen BN (--bn-eval) follows the
# 1-rank curve at 1-4 ranks; batch statistics per rank; weak scaling trains.
add_executable(test_resnet_dp ${CMAKE_CURRENT_LIST_DIR}/test_resnet_dp.cpp)
target_link_libraries(test_resnet_dp PRIVATE scaleprobe_resnet GTest::gtest_main)
add_dependencies(test_resnet_dp resnet_train)
target_compile_definitions(test_resnet_dp PRIVATE
  RESNET_TRAIN_PATH="$<TARGET_FILE:resnet_train>"
  SP_MPIEXEC="${MPIEXEC_EXECUTABLE}"
  SP_MPIEXEC_NUMPROC_FLAG="${MPIEXEC_NUMPROC_FLAG}"
  SP_MPIEXEC_FLAGS="${_sp_dp_flags}"
  SP_MPI_TEST_ENV="${_sp_dp_env}")
gtest_discover_tests(test_resnet_dp PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 300)
