# Tests of the ResNet model and image data (trainers/resnet), included from
# tests/unit/CMakeLists.txt (label unit). Single-threaded: the gradient check assumes one thread.
include(GoogleTest)
if(SCALEPROBE_TEST_MPI_FREE)
  sp_add_single_threaded_gtest_binary(test_resnet_model
                                      SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_resnet_model.cpp
                                              ${CMAKE_CURRENT_LIST_DIR}/test_resnet_gradcheck.cpp
                                              ${CMAKE_CURRENT_LIST_DIR}/test_resnet_data.cpp
                                      LINK scaleprobe_resnet)
endif()

# resnet_train end to end: loss falls, bitwise resume, signal handling, trace tables.
sp_add_trainer_test(test_resnet_train TRAINER resnet_train LABEL unit
                    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_resnet_train.cpp LINK scaleprobe_resnet)

# Error paths of resnet_train: non-zero exit and exactly one stderr line each.
sp_add_trainer_script_test(resnet_cli_errors ${CMAKE_CURRENT_LIST_DIR}/resnet_cli_errors.sh resnet_train)
