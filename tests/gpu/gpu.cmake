# GPU tests (label gpu): they run where a CUDA device exists and show as Not Run elsewhere (the
# optional part gpu). Built with the GPU path (CUDA toolkit + NCCL found); without it one
# placeholder says so, Not Run too, so the label is never silently empty.
if(SCALEPROBE_ENABLE_GPU)
  add_executable(test_gpu_reduce ${CMAKE_CURRENT_LIST_DIR}/test_gpu_reduce.cpp)
  target_link_libraries(test_gpu_reduce PRIVATE scaleprobe_gpu scaleprobe_collectives GTest::gtest_main)
  target_compile_definitions(test_gpu_reduce PRIVATE
                             SCALEPROBE_OPTIONAL_PARTS_FILE="${PROJECT_SOURCE_DIR}/tests/optional-parts.txt")
  gtest_discover_tests(test_gpu_reduce PROPERTIES LABELS gpu)
  # Every schedule and ncclAllReduce on the NCCL transport through device buffers (SP_TRANSPORT=nccl),
  # as the mpi label runs them on MPI: one GPU per rank (np2 needs two). Not Run where no GPU is visible.
  sp_add_mpi_test(allreduce_algorithms_nccl test_allreduce_algorithms RANKS 1 2)
  foreach(n 1 2)
    set_property(TEST allreduce_algorithms_nccl.np${n} APPEND PROPERTY ENVIRONMENT SP_TRANSPORT=nccl)
    set_tests_properties(allreduce_algorithms_nccl.np${n} PROPERTIES LABELS gpu)
  endforeach()
else()
  add_test(NAME gpu.not_built COMMAND bash -c "source ${PROJECT_SOURCE_DIR}/tests/lib/optional_part.sh && sp_skip_optional_part gpu 'this build has no GPU path (CUDA toolkit or NCCL not found)'")
  set_tests_properties(gpu.not_built PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
endif()
