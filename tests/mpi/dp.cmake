# The data-parallel engine end to end (label mpi): gtest binaries that launch a trainer under
# mpirun at 1-4 ranks, so one test can compare runs at different rank counts.
sp_add_trainer_test(test_dp_train TRAINER gpt_train LABEL mpi TIMEOUT 600
                    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_dp_train.cpp ${CMAKE_CURRENT_LIST_DIR}/test_dp_shard.cpp
                    LINK scaleprobe_core)
# SCALEPROBE_HAVE_GLOO comes with the collectives library; the Gloo case is Not Run without it.
target_link_libraries(test_dp_train PRIVATE scaleprobe_collectives)
target_compile_definitions(test_dp_train PRIVATE
                           SCALEPROBE_OPTIONAL_PARTS_FILE="${PROJECT_SOURCE_DIR}/tests/optional-parts.txt")
# --shard's counting test preloads this into every rank: it counts MPI_Allreduce / MPI_Iallreduce.
add_library(sp_count_allreduce MODULE ${PROJECT_SOURCE_DIR}/tests/lib/count_allreduce.cpp)
target_link_libraries(sp_count_allreduce PRIVATE MPI::MPI_C)
add_dependencies(test_dp_train sp_count_allreduce)
target_compile_definitions(test_dp_train PRIVATE SP_COUNT_ALLREDUCE_LIB="$<TARGET_FILE:sp_count_allreduce>")

# resnet_train on the engine (label mpi): strong scaling with frozen BN (--bn-eval) follows the
# 1-rank curve at 1-4 ranks; batch statistics per rank; weak scaling trains.
sp_add_trainer_test(test_resnet_dp TRAINER resnet_train LABEL mpi TIMEOUT 300
                    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_resnet_dp.cpp LINK scaleprobe_resnet)

# gpt_train's pipeline parallelism (label mpi): 2 and 4 stages, and 2 stages x 2 replicas, follow
# the one-rank loss curve under both schedules, and resume from mid-run checkpoints at another stage
# and replica count. One entry per stage count, named .npN by the ranks it launches, so the 4-stage
# one runs in the release stage only; the GoogleTest filter in the environment (an argument would
# make the entry look like a discovered one to test_skip_policy).
add_executable(test_pipeline ${CMAKE_CURRENT_LIST_DIR}/test_pipeline.cpp)
target_link_libraries(test_pipeline PRIVATE scaleprobe_core GTest::gtest_main)
add_dependencies(test_pipeline gpt_train)
string(REPLACE ";" " " pipeline_env "${SCALEPROBE_MPI_TEST_ENV}")
string(REPLACE ";" " " pipeline_flags "${SCALEPROBE_MPIEXEC_FLAGS}")
target_compile_definitions(test_pipeline PRIVATE GPT_TRAIN_PATH="$<TARGET_FILE:gpt_train>"
                           SP_MPIEXEC="${MPIEXEC_EXECUTABLE}" SP_MPIEXEC_NUMPROC_FLAG="${MPIEXEC_NUMPROC_FLAG}"
                           SP_MPIEXEC_FLAGS="${pipeline_flags}" SP_MPI_TEST_ENV="${pipeline_env}")
add_test(NAME gpt_pipeline.np2 COMMAND test_pipeline)
set_tests_properties(gpt_pipeline.np2 PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 300
                     ENVIRONMENT "GTEST_FILTER=Pipeline.TwoStages*" SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
add_test(NAME gpt_pipeline.np4 COMMAND test_pipeline)
set_tests_properties(gpt_pipeline.np4 PROPERTIES LABELS mpi PROCESSORS 4 TIMEOUT 300
                     ENVIRONMENT "GTEST_FILTER=Pipeline.Four*" SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
