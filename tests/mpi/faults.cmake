# Fault tests (label mpi): one rank SIGKILLed mid-run in every multi-rank binary, at 2 and 3 ranks
# (oversubscribed). Every other rank must be gone within 30 s and only a refused .partial trace
# may be left (rank_killed.sh).
set(_sp_analyze ${PROJECT_SOURCE_DIR}/analysis/scaleprobe-analyze)
set(_sp_killed_allreduce_perf $<TARGET_FILE:allreduce_perf> -b 8 -e 1M -n 100000 --no-membw -q)
set(_sp_killed_bucket_sweep $<TARGET_FILE:bucket_sweep> -l ${PROJECT_SOURCE_DIR}/tests/slurm/tiny.layout -n 100000 -q)
set(_sp_killed_gpt_train $<TARGET_FILE:gpt_train> -m gpt-micro --synthetic-bytes 100000 --val-batches 0 -s 100000)
set(_sp_killed_resnet_train $<TARGET_FILE:resnet_train> --depth 8 --width 8 --synthetic-images 512 --synthetic-test 64 -s 100000)
foreach(prog allreduce_perf bucket_sweep gpt_train resnet_train)
  foreach(np 2 3)
    add_test(NAME rank_killed.${prog}.np${np}
             COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/rank_killed.sh ${np} $<TARGET_FILE:trace_check> ${_sp_analyze}
                     ${_sp_killed_${prog}})
    set_tests_properties(rank_killed.${prog}.np${np} PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 90
                         ENVIRONMENT "${SCALEPROBE_MPI_TEST_ENV}")
  endforeach()
endforeach()
# Rank 0 (which renames the trace at the end) and the last rank, at 3 ranks.
foreach(case allreduce_perf:0 gpt_train:2)
  string(REPLACE ":" ";" c ${case})
  list(GET c 0 prog)
  list(GET c 1 victim)
  add_test(NAME rank_killed.${prog}.np3.rank${victim}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/rank_killed.sh 3 $<TARGET_FILE:trace_check> ${_sp_analyze}
                   ${_sp_killed_${prog}})
  set_tests_properties(rank_killed.${prog}.np3.rank${victim} PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 90
                       ENVIRONMENT "${SCALEPROBE_MPI_TEST_ENV};VICTIM=${victim}")
endforeach()

# The file system full under a multi-rank trace or rank 0's checkpoint (tests/unit/fs_full.sh;
# sp_add_fs_full_test and the known failures are described in tests/unit/CMakeLists.txt).
#   ~one (traces): each rank that gets to the full disk before MPI_Abort prints its own "error:
#     rank N: cannot write trace ..." line (mostly two lines at 2 ranks: a race).
set(_sp_fs_gpt $<TARGET_FILE:gpt_train> -m gpt-micro --synthetic-bytes 100000 --val-batches 0 -q -s 3)
sp_add_fs_full_test(allreduce_perf_trace.np2 trace 64 2 "~one"
                    $<TARGET_FILE:allreduce_perf> -b 8 -e 4K -n 50 --no-membw -q)
sp_add_fs_full_test(gpt_train_trace.np2 trace 32 2 "~one" ${_sp_fs_gpt})
sp_add_fs_full_test(gpt_train_checkpoint.np3 checkpoint 128 3 "" ${_sp_fs_gpt})
