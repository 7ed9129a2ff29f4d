# Tests of the ResNet model and image data (trainers/resnet), included from
# tests/unit/CMakeLists.txt (label unit). Single-threaded: the gradient check assumes one thread.
# gtest_discover_tests (CMake 3.25) keeps only one ENVIRONMENT variable, hence
# ENVIRONMENT_MODIFICATION for the second (see kernels.cmake).
include(GoogleTest)
add_executable(test_resnet_model ${CMAKE_CURRENT_LIST_DIR}/test_resnet_model.cpp
                                 ${CMAKE_CURRENT_LIST_DIR}/test_resnet_data.cpp)
target_link_libraries(test_resnet_model PRIVATE scaleprobe_resnet GTest::gtest_main)
gtest_discover_tests(test_resnet_model PROPERTIES LABELS unit
                     ENVIRONMENT "OMP_NUM_THREADS=1"
                     ENVIRONMENT_MODIFICATION "OPENBLAS_NUM_THREADS=set:1")

# resnet_train end to end: loss falls, bitwise resume, signal handling, trace tables.
add_executable(test_resnet_train ${CMAKE_CURRENT_LIST_DIR}/test_resnet_train.cpp)
target_link_libraries(test_resnet_train PRIVATE scaleprobe_resnet GTest::gtest_main)
target_compile_definitions(test_resnet_train PRIVATE RESNET_TRAIN_PATH="$<TARGET_FILE:resnet_train>")
add_dependencies(test_resnet_train resnet_train)
gtest_discover_tests(test_resnet_train PROPERTIES LABELS unit
                     ENVIRONMENT "OMP_NUM_THREADS=1"
                     ENVIRONMENT_MODIFICATION "OPENBLAS_NUM_THREADS=set:1")

# Error paths of resnet_train: non-zero exit and exactly one stderr line each.
add_test(NAME resnet_cli_errors COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/resnet_cli_errors.sh $<TARGET_FILE:resnet_train>)
set_tests_properties(resnet_cli_errors PROPERTIES LABELS unit TIMEOUT 120
                     ENVIRONMENT "${SCALEPROBE_MPI_TEST_ENV}")
