# Tests of the ResNet model and image data (trainers/resnet), included from
# tests/unit/CMakeLists.txt (label unit). Single-threaded: the gradient check assumes one thread.
include(GoogleTest)
if(SCALEPROBE_TEST_MPI_FREE)
  add_executable(test_resnet_model ${CMAKE_CURRENT_LIST_DIR}/test_resnet_model.cpp
                                   ${CMAKE_CURRENT_LIST_DIR}/test_resnet_gradcheck.cpp
                                   ${CMAKE_CURRENT_LIST_DIR}/test_resnet_data.cpp)
  target_link_libraries(test_resnet_model PRIVATE scaleprobe_resnet GTest::gtest_main)
  sp_add_single_threaded_gtests(test_resnet_model)
endif()

# resnet_train end to end: loss falls, bitwise resume, signal handling, trace tables.
sp_add_trainer_test(test_resnet_train TRAINER resnet_train LABEL unit
                    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_resnet_train.cpp LINK scaleprobe_resnet)

# Error paths of resnet_train: non-zero exit and exactly one stderr line each.
sp_add_trainer_script_test(resnet_cli_errors ${CMAKE_CURRENT_LIST_DIR}/resnet_cli_errors.sh resnet_train)
