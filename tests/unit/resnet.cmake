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
