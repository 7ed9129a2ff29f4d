# Tests of the GPT trainer (trainers/gpt), included from tests/unit/CMakeLists.txt (label unit).
# Single-threaded: the gradient check and the bitwise resume comparison assume one thread.
# gtest_discover_tests (CMake 3.25) keeps only one ENVIRONMENT variable, hence
# ENVIRONMENT_MODIFICATION for the second (see kernels.cmake).
include(GoogleTest)
add_executable(test_gpt_model ${CMAKE_CURRENT_LIST_DIR}/test_gpt_model.cpp)
target_link_libraries(test_gpt_model PRIVATE scaleprobe_gpt GTest::gtest_main)
gtest_discover_tests(test_gpt_model PROPERTIES LABELS unit
                     ENVIRONMENT "OMP_NUM_THREADS=1"
                     ENVIRONMENT_MODIFICATION "OPENBLAS_NUM_THREADS=set:1")

add_executable(test_gpt_train ${CMAKE_CURRENT_LIST_DIR}/test_gpt_train.cpp)
target_link_libraries(test_gpt_train PRIVATE scaleprobe_gpt GTest::gtest_main)
target_compile_definitions(test_gpt_train PRIVATE GPT_TRAIN_PATH="$<TARGET_FILE:gpt_train>")
add_dependencies(test_gpt_train gpt_train)
gtest_discover_tests(test_gpt_train PROPERTIES LABELS unit
                     ENVIRONMENT "OMP_NUM_THREADS=1"
                     ENVIRONMENT_MODIFICATION "OPENBLAS_NUM_THREADS=set:1")

# Error paths of gpt_train: non-zero exit and exactly one stderr line each.
add_test(NAME gpt_cli_errors COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/gpt_cli_errors.sh $<TARGET_FILE:gpt_train>)
set_tests_properties(gpt_cli_errors PROPERTIES LABELS unit TIMEOUT 120
                     ENVIRONMENT "${SCALEPROBE_MPI_TEST_ENV}")

# The checkpoint loads into PyTorch (trainers/gpt/load_checkpoint.py) with matching logits.
# Skipped (exit 77) where torch or h5py is missing (SCALEPROBE_NO_TORCH installs).
add_test(NAME gpt_torch_load
         COMMAND bash ${PROJECT_SOURCE_DIR}/trainers/gpt/test_torch_load.sh $<TARGET_FILE:gpt_train>)
set_tests_properties(gpt_torch_load PROPERTIES LABELS unit TIMEOUT 120 SKIP_RETURN_CODE 77
                     ENVIRONMENT "${SCALEPROBE_MPI_TEST_ENV}")
