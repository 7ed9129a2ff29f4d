# SLURM tests (label slurm), included from tests/CMakeLists.txt.
#  slurm_jobs_offline, slurm_submit_offline: the job scripts' and jobs/submit-sweep's logic without
#    any daemon (seconds each; offline_lib.sh is what they share).
#  slurm_sweep: a private local SLURM cluster (munged + slurmctld + 4 slurmd virtual nodes, needs
#    root and slurm-wlm/munge from scripts/install-deps.sh; fails, never skips, without them), a
#    real sweep of jobs/allreduce.sbatch and jobs/bucket_sweep.sbatch through jobs/submit-sweep,
#    the report job and the resume path. A few minutes on 2 cores; every wait inside is bounded
#    well below the TIMEOUT and the daemons are always stopped by PID.
add_test(NAME slurm_jobs_offline
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_jobs_offline.sh ${PROJECT_BINARY_DIR})
set_tests_properties(slurm_jobs_offline PROPERTIES LABELS slurm TIMEOUT 120)
add_test(NAME slurm_submit_offline
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_submit_offline.sh ${PROJECT_BINARY_DIR})
set_tests_properties(slurm_submit_offline PROPERTIES LABELS slurm TIMEOUT 120)

add_test(NAME slurm_sweep
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_slurm_sweep.sh ${PROJECT_BINARY_DIR})
# Not RUN_SERIAL: a cluster's test spends its time mostly waiting for the scheduler (slurm_train: 37 s
# of CPU in 52 s, slurm_sweep about 0.8 of a core, measured in a cpuacct cgroup on 2 cores), so it
# holds one ctest slot and shares the machine; the lock keeps the two clusters apart.
set_tests_properties(slurm_sweep PROPERTIES LABELS slurm TIMEOUT 900 RESOURCE_LOCK slurm_cluster PROCESSORS 1)

# slurm_train: the trainer jobs on a private 2-node local cluster: a strong/weak gpt_train sweep
# through jobs/submit-sweep, and the time-limit path (USR1 -> checkpoint -> requeue -> resume).
add_test(NAME slurm_train
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_slurm_train.sh ${PROJECT_BINARY_DIR})
set_tests_properties(slurm_train PROPERTIES LABELS slurm TIMEOUT 600 RESOURCE_LOCK slurm_cluster PROCESSORS 1)
