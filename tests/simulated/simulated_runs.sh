#!/usr/bin/env bash
# The simulated build (preset smpi) on SimGrid's SMPI, through scripts/simulate:
#  - allreduce_perf, every algorithm of the simulated build, f32 and i32, 8 ranks (2 nodes x 4):
#    every result verified (exit 0), the table headed SIMULATED, the trace valid with simulated = 1
#    and the platform in its provenance;
#  - the same run again: the simulated times are identical (a simulation is deterministic);
#  - bucket_sweep at 6 ranks (3 nodes x 2) and collective_perf's reduce-scatter at 5 ranks: valid traces;
#  - the ring's simulated time at 1 MiB on 8 nodes of one rank each against the alpha-beta closed
#    form of a pipelined ring on this platform (within 3 %);
#  - step_replay of two stored gpt-micro traces (progress overlap on 2 ranks, thread on 1): within
#    25 % of the measured step like for like, slower at 16 ranks, a valid simulated trace;
#  - the ring on a torus and a fat tree (--topology) against the closed form with each route's link
#    count, and on a dragonfly shaped from --nodes slower than flat; a bad shape: one line, exit 2;
#  - a simulated point as a SLURM job (jobs/allreduce.sbatch with SCALEPROBE_SIMULATE=flat in a fake
#    one-task allocation): the trace named _sim-flat, simulated = 1; without its point, one line;
#    SCALEPROBE_SIMULATE=torus: the trace named _sim-torus, on a torus;
#  - bad input: a platform option out of range, a program not built, a replay of a trace that is
#    not a trainer's or of a case it lacks: one line each, non-zero.
#   bash simulated_runs.sh BUILD_DIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"

run_allreduce() {
  sim --nodes 2 --ranks-per-node 4 allreduce_perf -b 8 -e 256K -f 8 -d f32,i32 -n 3 -w 1 -q -o "$work/$1.h5" \
    > "$work/$1.txt" 2> "$work/$1.err" || { cat "$work/$1.err" "$work/$1.txt"; fail "allreduce_perf ($1) exit $?"; }
}
run_allreduce a
run_allreduce b
grep -q '^# SIMULATED (SimGrid SMPI)' "$work/a.txt" || fail "no SIMULATED banner: $(head -2 "$work/a.txt")"
rows=$(grep -vc '^#' "$work/a.txt")
[ "$rows" = $((6 * 2 * 6)) ] || fail "expected 72 rows (6 sizes x 2 dtypes x 6 algorithms), got $rows"
# Columns: ... t_mean(us) is the 9th; #wrong the last.
awk '!/^#/ && $NF != 0 { bad = 1 } END { exit bad }' "$work/a.txt" || fail "wrong elements in a row"
cmp -s <(grep -v '^#' "$work/a.txt") <(grep -v '^#' "$work/b.txt") || fail "two identical simulations differ: $(diff <(grep -v '^#' "$work/a.txt") <(grep -v '^#' "$work/b.txt") | head -4)"

check_trace() {  # TRACE [PLATFORM TEXT, default: flat cluster]
  sim --nodes 1 --ranks-per-node 1 trace_check "$1" > "$work/check.txt" 2>&1 || { cat "$work/check.txt"; fail "trace_check $1"; }
  [ "$(h5dump -a simulated "$1" | grep -c '(0): 1$')" = 1 ] || fail "$1: simulated is not 1"
  h5dump -a /provenance/env/SCALEPROBE_SIM_PLATFORM "$1" | grep -qF "${2:-flat cluster}" || fail "$1: no platform (${2:-flat cluster}) in the provenance"
}
check_trace "$work/a.h5"

sim --nodes 3 --ranks-per-node 2 bucket_sweep --layout resnet50 -c 5,25 -a ring,mpi -n 1 -q -o "$work/bucket.h5" > "$work/bucket.txt" 2>&1 ||
  { cat "$work/bucket.txt"; fail "bucket_sweep"; }
check_trace "$work/bucket.h5"
sim --nodes 5 --ranks-per-node 1 collective_perf -c reduce_scatter -b 1K -e 64K -f 64 -n 2 -q -o "$work/rs.h5" > "$work/rs.txt" 2>&1 ||
  { cat "$work/rs.txt"; fail "collective_perf reduce_scatter"; }
check_trace "$work/rs.h5"

# The ring on p = 8 hosts, one rank each, n = 1 MiB in one pipelining chunk: 2(p-1) steps, each
# sending n/p bytes over two host links (alpha = 2 x 1 us, the backbone has no latency here) at
# the link's 12.5 GB/s: t = 2(p-1)(2e-6 + (n/p)/12.5e9).
sim --nodes 8 --ranks-per-node 1 allreduce_perf --sizes 1M -a ring -n 2 -w 1 -q --chunk 1M -o "$work/ring.h5" > "$work/ring.txt" 2>&1 ||
  { cat "$work/ring.txt"; fail "ring"; }
awk '!/^#/ { t = $9 * 1e-6; model = 2 * 7 * (2e-6 + (1048576 / 8) / 12.5e9); r = t / model;
             printf "ring 1 MiB, 8 hosts: simulated %.2f us, closed form %.2f us, ratio %.3f\n", t * 1e6, model * 1e6, r;
             if (r < 0.97 || r > 1.03) exit 1 }' "$work/ring.txt" || fail "ring time off the closed form"

# Topologies (scripts/simulate --topology): the same ring on 8 one-rank hosts, where each of its
# 2(p-1) steps takes as many link latencies as its slowest neighbour pair's route has links.
# A torus of 8 (a ring of hosts): neighbours one link apart, t = 2(p-1)(1 us + (n/p)/12.5 GB/s).
# A fat tree of two leaf switches of 4 hosts under one top switch ("2;4,2;1,1;1,1"): hosts 3 and 4
# (and 7 and 0) go up and down it, 4 links, t = 2(p-1)(4 us + (n/p)/12.5 GB/s).
ring_on() {  # NAME CLOSED-FORM-LATENCY-S TOPOLOGY-OPTIONS...
  local name=$1 lat=$2; shift 2
  sim --nodes 8 --ranks-per-node 1 "$@" allreduce_perf --sizes 1M -a ring -n 2 -w 1 -q --chunk 1M -o "$work/$name.h5" \
    > "$work/$name.txt" 2>&1 || { cat "$work/$name.txt"; fail "ring on $name"; }
  if [ "$lat" != - ]; then
    awk -v lat="$lat" -v name="$name" '!/^#/ { t = $9 * 1e-6; model = 2 * 7 * (lat + (1048576 / 8) / 12.5e9); r = t / model;
      printf "ring 1 MiB, 8 hosts, %s: simulated %.2f us, closed form %.2f us, ratio %.3f\n", name, t * 1e6, model * 1e6, r;
      if (r < 0.97 || r > 1.03) exit 1 }' "$work/$name.txt" || fail "ring time on $name off the closed form"
  fi
}
ring_on torus 1e-6 --topology torus --topology-parameters 8
ring_on fat-tree 4e-6 --topology fat-tree --topology-parameters '2;4,2;1,1;1,1'
h5dump -a /provenance/env/SCALEPROBE_SIM_PLATFORM "$work/fat-tree.h5" | grep -q 'fat-tree cluster (FAT_TREE 2;4,2;1,1;1,1): 8 nodes' ||
  fail "fat tree: the platform in the provenance does not name it: $(h5dump -a /provenance/env/SCALEPROBE_SIM_PLATFORM "$work/fat-tree.h5")"
# A dragonfly shaped from --nodes (2 groups of 4 routers, one host each): routes between groups
# take more links than the flat cluster's two, so the ring is slower than there.
ring_on dragonfly - --topology dragonfly
check_trace "$work/dragonfly.h5" 'dragonfly cluster (DRAGONFLY 2,1;1,1;4,1;1): 8 nodes'  # the shape from --nodes 8
paste <(grep -v '^#' "$work/ring.txt") <(grep -v '^#' "$work/dragonfly.txt") |
  awk '{ if ($26 + 0 <= $9 + 0) bad = 1 } END { exit bad }' ||
  fail "dragonfly ring not slower than flat: $(grep -hv '^#' "$work/ring.txt" "$work/dragonfly.txt")"
# A shape whose hosts are not --nodes, or malformed: one line, exit 2.
for bad in "torus 2,2 the topology has 4 hosts, --nodes 8" "fat-tree 2;4,2;1,1 not h;m1" "dragonfly 2,1;4,1;1,1;1 1 routers per chassis for 2 groups"; do
  read -r topo params expect <<<"$bad"
  rc=0; sim --nodes 8 --topology "$topo" --topology-parameters "$params" allreduce_perf > "$work/bad.txt" 2>&1 || rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l < "$work/bad.txt")" = 1 ] && grep -qF "$expect" "$work/bad.txt" ||
    fail "--topology $topo --topology-parameters $params: exit $rc, $(cat "$work/bad.txt")"
done

# step_replay (sim/step_replay.cpp) of two measured gpt-micro runs (tests/data): progress overlap
# on 2 ranks, replayed on 2 ranks of one host and on 16 (2 hosts x 8); thread overlap on 1 rank,
# replayed on 4. Columns of a case row: case algorithm cap buckets steps measured predicted error
# m.wait p.wait.
data=$root/tests/data
sim --nodes 1 --ranks-per-node 2 step_replay "$data/train-gpt-micro-progress-2ranks.h5" -o "$work/replay2.h5" \
  > "$work/replay2.txt" 2>&1 || { cat "$work/replay2.txt"; fail "step_replay on 2 ranks"; }
grep -q '^# SIMULATED (SimGrid SMPI)' "$work/replay2.txt" || fail "step_replay: no SIMULATED banner"
[ "$(grep -c '^  ' "$work/replay2.txt")" = 2 ] || fail "step_replay: expected 2 case rows: $(cat "$work/replay2.txt")"
# Like for like (same ranks, the measured compute), the replayed step is the measured one within 25 %.
awk '/^  / { e = $8 + 0; if (e < -25 || e > 25) bad = 1 } END { exit bad }' "$work/replay2.txt" ||
  fail "step_replay: predicted step off the measured by more than 25 %: $(grep '^  ' "$work/replay2.txt")"
check_trace "$work/replay2.h5"
sim --nodes 2 --ranks-per-node 8 step_replay "$data/train-gpt-micro-progress-2ranks.h5" -q -o "$work/replay16.h5" \
  > "$work/replay16.txt" 2>&1 || { cat "$work/replay16.txt"; fail "step_replay on 16 ranks"; }
# 16 ranks over host links take longer than 2 on one host: each case's predicted step grows.
paste <(grep '^  ' "$work/replay2.txt") <(grep '^  ' "$work/replay16.txt") |
  awk '{ if ($7 + 0 <= 0 || $17 + 0 < $7 + 0) bad = 1 } END { exit bad }' ||
  fail "step_replay: 16 ranks not slower than 2: $(grep '^  ' "$work/replay2.txt" "$work/replay16.txt")"
grep -q '^  .* - ' "$work/replay16.txt" || fail "step_replay: an error given where the rank counts differ"
sim --nodes 1 --ranks-per-node 4 step_replay "$data/train-gpt-micro-thread-1rank.h5" -q --steps 2 -o "$work/replay-thread.h5" \
  > "$work/replay-thread.txt" 2>&1 || { cat "$work/replay-thread.txt"; fail "step_replay of a thread-mode run"; }
[ "$(grep -c '^  ' "$work/replay-thread.txt")" = 1 ] || fail "step_replay thread: $(cat "$work/replay-thread.txt")"
# Not a trainer's trace, or a case it does not have: one line, non-zero.
if sim --nodes 1 --ranks-per-node 2 step_replay "$work/a.h5" -q -o "$work/bad.h5" > "$work/bad.txt" 2>&1; then
  fail "step_replay took an allreduce trace"; fi
grep -q "not a trainer's" "$work/bad.txt" && [ ! -e "$work/bad.h5" ] || fail "step_replay of an allreduce trace: $(cat "$work/bad.txt")"
if sim --nodes 1 --ranks-per-node 2 step_replay "$data/train-gpt-micro-progress-2ranks.h5" --case 7 -q -o "$work/bad.h5" \
  > "$work/bad.txt" 2>&1; then fail "step_replay --case 7 accepted"; fi
grep -q -- "--case 7: .* has 2 case(s)" "$work/bad.txt" || fail "step_replay --case 7: $(cat "$work/bad.txt")"

# Bad input: one line, non-zero.
if sim --nodes 0 allreduce_perf > "$work/bad.txt" 2>&1; then fail "--nodes 0 accepted"; fi
grep -q "argument --nodes: '0' is not a count" "$work/bad.txt" || fail "--nodes 0: $(cat "$work/bad.txt")"
if sim no_such_program > "$work/bad.txt" 2>&1; then fail "a missing program accepted"; fi
[ "$(wc -l < "$work/bad.txt")" = 1 ] && grep -q "no_such_program not found" "$work/bad.txt" || fail "missing program: $(cat "$work/bad.txt")"
# A simulated point as a SLURM job (submit-sweep --simulate flat): jobs/allreduce.sbatch in a fake
# one-task allocation runs 2 x 4 simulated ranks through scripts/simulate and checks the trace.
job=(env -u SCALEPROBE_BUILD_DIR SLURM_JOB_ID=93 SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=1 SLURM_NTASKS_PER_NODE=1
     SLURM_JOB_NODELIST=n1 SCALEPROBE_RESULTS="$work/results" SCALEPROBE_SIM_BUILD_DIR="$build" SCALEPROBE_SIMULATE=flat)
t=$work/results/default/allreduce_N2_t4_c1_sim-flat_j93.h5
"${job[@]}" SCALEPROBE_SIM_POINT=2x4x1 bash "$root/jobs/allreduce.sbatch" --sizes 8,4K -n 2 > "$work/job.txt" 2>&1 ||
  { cat "$work/job.txt"; fail "a simulated job"; }
grep -q "^scaleprobe-job: OK $t\$" "$work/job.txt" || fail "simulated job: $(tail -3 "$work/job.txt")"
[ "$(h5dump -a simulated "$t" | grep -c '(0): 1$')" = 1 ] || fail "$t: simulated is not 1"
if "${job[@]}" SLURM_JOB_ID=94 bash "$root/jobs/allreduce.sbatch" > "$work/bad.txt" 2>&1; then fail "a simulated job without its point ran"; fi
grep -q "^scaleprobe-job: error: SCALEPROBE_SIM_POINT=: a simulated point needs" "$work/bad.txt" || fail "no point: $(cat "$work/bad.txt")"
# The dimension's other values are the platform's topology: a torus point, its shape from its nodes.
t=$work/results/default/allreduce_N2_t4_c1_sim-torus_j95.h5
"${job[@]}" SLURM_JOB_ID=95 SCALEPROBE_SIMULATE=torus SCALEPROBE_SIM_POINT=2x4x1 bash "$root/jobs/allreduce.sbatch" --sizes 8 -n 1 \
  > "$work/job.txt" 2>&1 || { cat "$work/job.txt"; fail "a simulated torus job"; }
grep -q "^scaleprobe-job: OK $t\$" "$work/job.txt" || fail "simulated torus job: $(tail -3 "$work/job.txt")"
h5dump -a /provenance/env/SCALEPROBE_SIM_PLATFORM "$t" | grep -q 'torus cluster (TORUS 2): 2 nodes x 4 ranks' ||
  fail "$t: not the torus platform"
echo "simulated runs: ok"
