# Tests of the GPT trainer (trainers/gpt), included from tests/unit/CMakeLists.txt (label unit).
# Single-threaded: the gradient check and the bitwise resume comparison assume one thread.
include(GoogleTest)
if(SCALEPROBE_TEST_MPI_FREE)
  sp_add_single_threaded_gtest_binary(test_gpt_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpt_model.cpp
                                      LINK scaleprobe_gpt)
  # The pipeline's stage split, schedules and layer ranges (trainers/gpt/pipeline_plan.hpp).
  sp_add_single_threaded_gtest_binary(test_gpt_pipeline SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpt_pipeline.cpp
                                      LINK scaleprobe_gpt)
endif()

sp_add_trainer_test(test_gpt_train TRAINER gpt_train LABEL unit
                    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpt_train.cpp LINK scaleprobe_gpt)

# Error paths of gpt_train: non-zero exit and exactly one stderr line each.
sp_add_trainer_script_test(gpt_cli_errors ${CMAKE_CURRENT_LIST_DIR}/gpt_cli_errors.sh gpt_train)

# The checkpoint loads into PyTorch (python/scaleprobe_peers/gpt_checkpoint.py) with matching logits.
# Not Run (exit 77) where torch or h5py is missing (SCALEPROBE_NO_TORCH installs), a failure in CI
# unless torch is optional there (tests/optional-parts.txt).
if(SCALEPROBE_TEST_MPI_FREE)
  sp_add_trainer_script_test(gpt_torch_load ${PROJECT_SOURCE_DIR}/tests/unit/gpt_torch_load.sh gpt_train
                             SKIP_RETURN_CODE 77)
endif()
