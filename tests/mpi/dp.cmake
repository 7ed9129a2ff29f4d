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
