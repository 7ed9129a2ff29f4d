#!/usr/bin/env bash
# CTest slurm_submit_offline (label slurm): jobs/submit-sweep's logic that needs no SLURM daemons,
# with a fake `sbatch`/`squeue` on PATH: refusals, dry-run lines (grid, --repeat, arrays, afterany
# report), campaign files (expansion, TOML = JSON, flags overriding the file, one-line errors), and
# the resume per (point, pass) with a fake queue, including a manifest written by the old bash
# submitter. The job scripts' side: test_jobs_offline.sh.
#   tests/slurm/test_submit_offline.sh [BUILD_DIR]
set -uo pipefail
# shellcheck source=offline_lib.sh
source "$(dirname "$0")/offline_lib.sh"

# expect_error NAME PATTERN CMD...: exit 2 with exactly one line, "submit-sweep: error: ..." matching PATTERN
expect_error() {
  local name=$1 pat=$2; shift 2
  local out r=0; out=$("$@" 2>&1) || r=$?
  if [ "$r" = 2 ] && [ "$(grep -c . <<<"$out")" = 1 ] && grep -Eq -- "^submit-sweep: error: .*$pat" <<<"$out"; then ok "$name"
  else no "$name (exit $r): $out"; fi
}
# From the dimension table (python/scaleprobe_sweep/dimensions.py), so a new dimension needs no edit
# here: every dimension's variable at its default as --export lists it, and the manifest's header.
table() { PYTHONPATH="$ROOT/python" /usr/bin/python3 -c "from scaleprobe_sweep import dimensions, manifest; $1"; }
DEFAULT_EXPORTS=$(table 'print(",".join(dimensions.exports(dimensions.defaults())))')
MANIFEST_HEADER=$(table 'print("\t".join(manifest.COLUMNS))')

# --- submitter: refusals and dry runs (no SLURM needed) ---
expect_error "submitter: --bench required" '--bench is required' "$SUB" --dry-run
expect_error "submitter: bad list" "--tasks-per-node 1,x: 'x' is not a positive integer" "$SUB" --bench allreduce --tasks-per-node 1,x --dry-run
expect_error "submitter: unknown option" 'unknown option --nodez' "$SUB" --bench allreduce --nodez 1
expect_error "submitter: a missing value" '--time needs a value' "$SUB" --bench allreduce --time
expect_error "submitter: bad --repeat" '--repeat 0: not a positive number of passes' "$SUB" --bench allreduce --repeat 0 --dry-run
expect_error "submitter: GPU run of a trainer refused (no --backend nccl)" 'runs gpt_train on --backend nccl, which .* does not offer' "$SUB" --bench gpt_train --gpus-per-node 2
expect_error "submitter: -o refused" 'do not pass -o: the job script names the trace' "$SUB" --bench allreduce --dry-run -- -o x.h5
expect_error "submitter: --scaling in the arguments refused" 'do not pass --scaling=weak' "$SUB" --bench allreduce --dry-run -- --scaling=weak
expect_error "submitter: trainer --global-batch refused" 'do not pass --global-batch' "$SUB" --bench gpt_train --dry-run -- --global-batch 8
expect_error "submitter: trainer --save refused" 'do not pass --save: the job script manages the checkpoint' "$SUB" --bench resnet_train --dry-run -- --save c.h5
expect_error "submitter: --requeue only for trainers" '--requeue is for trainer jobs' "$SUB" --bench allreduce --requeue --dry-run
expect_error "submitter: a point listed twice" 'point allreduce_N1_t1_c1 is listed twice' "$SUB" --bench allreduce --nodes 1,1 --dry-run
expect "trainer dry run: the warning signal, -B passed unchanged" 0 'sbatch .*--signal=B:USR1@120 .*jobs/gpt_train.sbatch -B 8 -s 5$' \
  "$SUB" --bench gpt_train --nodes 2 --dry-run -- -B 8 -s 5
expect "strong trainer without -B is accepted" 0 'jobs/resnet_train.sbatch -s 5$' "$SUB" --bench resnet_train --dry-run -- -s 5
expect "weak bucket_sweep with a built-in layout is accepted" 0 'SCALEPROBE_SCALING=weak.* [^ ]*/jobs/bucket_sweep.sbatch --layout resnet50$' \
  "$SUB" --bench bucket_sweep --scaling weak --dry-run -- --layout resnet50
out=$("$SUB" --bench allreduce --campaign c1 --nodes 1,2 --tasks-per-node 1,2 --cpus-per-task 2 --time 7 --partition p1 --account a1 \
      --qos q1 --sbatch-opt=--exclusive --analysis --dry-run -- --sizes 8,1K -a ring 2>&1)
if [ "$(grep -c '^sbatch .*allreduce.sbatch' <<<"$out")" = 4 ] &&
   grep -q -- '^sbatch --parsable --job-name=sp-allreduce-N2t2c2 --nodes=2 --ntasks-per-node=2 --cpus-per-task=2 --time=7 --partition=p1 --account=a1 --qos=q1 --exclusive --output=[^ ]*/c1/logs/allreduce_N2_t2_c2_j%j.out --export=ALL,SCALEPROBE_ROOT=[^ ]*,SCALEPROBE_CAMPAIGN=c1,'"$DEFAULT_EXPORTS"' [^ ]*/jobs/allreduce.sbatch --sizes 8,1K -a ring$' <<<"$out" &&
   grep -q -- "^sbatch --parsable --job-name=sp-report --ntasks=1 --time=7 --partition=p1 --account=a1 --qos=q1 --exclusive '--dependency=afterany:<job ids of the jobs above>' .*jobs/report.sbatch$" <<<"$out" &&
   grep -q '^# dry run: 4 point(s) to run; nothing submitted, nothing written$' <<<"$out" &&
   [ ! -e "$W/results/c1" ]; then ok "dry run: grid lines, sbatch options, afterany report line, nothing written"
else no "dry run lines: $out"; fi
out=$("$SUB" --bench allreduce --nodes 2 --dry-run 2>&1)
grep -q -- '^sbatch .* --exclusive --output=.*allreduce.sbatch$' <<<"$out" && ! grep -q SCALEPROBE_SRUN_MPI <<<"$out" &&
  ok "benchmark jobs are exclusive by default; no srun plugin forced" || no "default exclusive: $out"
out=$("$SUB" --bench allreduce --nodes 2 --shared --srun-mpi pmix --analysis --dry-run 2>&1)
! grep -q -- '--exclusive' <<<"$out" && grep -q 'SCALEPROBE_SRUN_MPI=pmix ' <<<"$out" &&
  ok "--shared: no --exclusive; --srun-mpi exported" || no "--shared: $out"
out=$("$SUB" --bench allreduce --nodes 2 --tasks-per-node 4 --gpus-per-node 4 --launcher mpirun --dry-run 2>&1)
grep -q -- '--gpus-per-node=4 .*SCALEPROBE_GPUS_PER_NODE=4,.*SCALEPROBE_LAUNCHER=mpirun,SCALEPROBE_BACKEND=nccl[, ]' <<<"$out" && grep -q 'allreduce_N2_t4_c1_g4_mpirun_j%j.out' <<<"$out" &&
  ok "dry run: GPU option wired through" || no "dry run GPU: $out"
out=$("$SUB" --bench allreduce --simulate flat --nodes 4 --tasks-per-node 16 --dry-run 2>&1)
grep -q -- '^sbatch --parsable --job-name=sp-allreduce-N4t16c1_sim-flat --nodes=1 --ntasks-per-node=1 --cpus-per-task=1 --time=00:10:00 --output=[^ ]*/allreduce_N4_t16_c1_sim-flat_j%j.out .*SCALEPROBE_SIMULATE=flat,.*SCALEPROBE_SIM_BUILD_DIR=[^ ]*,SCALEPROBE_SIM_POINT=4x16x1 ' <<<"$out" &&
  ok "dry run: a simulated point is a one-task, shared job carrying its point" || no "dry run simulate: $out"
expect_error "submitter: a simulated trainer refused" 'simulate is for allreduce' "$SUB" --bench gpt_train --simulate flat
out=$("$SUB" --bench bucket_sweep --nodes 1,2 --tasks-per-node 1,4 --cpus-per-task 1,2 --array-mode --dry-run -- --layout resnet50 2>&1)
grep -q -- '--array=0-7 --nodes=2 --ntasks-per-node=4 --cpus-per-task=2 .*SCALEPROBE_ARRAY_POINTS=1x1x1:1x1x2:1x4x1:1x4x2:2x1x1:2x1x2:2x4x1:2x4x2 ' <<<"$out" &&
  ok "dry run: one array sized to the largest point" || no "dry run array: $out"
out=$("$SUB" --bench allreduce --tasks-per-node 1,2 --repeat 2 --dry-run 2>&1)
if [ "$(grep -c '^sbatch ' <<<"$out")" = 4 ] &&
   [ "$(grep '^sbatch ' <<<"$out" | grep -o 'logs/[^ ]*' | tr '\n' ' ')" = "logs/allreduce_N1_t1_c1_j%j.out logs/allreduce_N1_t2_c1_j%j.out logs/allreduce_N1_t1_c1_p2_j%j.out logs/allreduce_N1_t2_c1_p2_j%j.out " ] &&
   grep -q -- '--job-name=sp-allreduce-N1t2c1_p2 .*,SCALEPROBE_PASS=2 ' <<<"$out" &&
   ! grep -q -- '--job-name=sp-allreduce-N1t1c1 .*SCALEPROBE_PASS' <<<"$out"; then ok "--repeat 2: pass 1 of every point, then pass 2 (_p2, SCALEPROBE_PASS=2)"
else no "--repeat dry run: $out"; fi
out=$("$SUB" --bench allreduce --tasks-per-node 1,2 --repeat 2 --array-mode --dry-run 2>&1)
grep -q -- '--array=0-3 .*SCALEPROBE_ARRAY_POINTS=1x1x1:1x2x1:1x1x1p2:1x2x1p2 ' <<<"$out" &&
  ok "--repeat in an array: entries carry the pass" || no "--repeat array: $out"

# --- campaign files ---
C=$W/campaigns && mkdir -p "$C"
cat >"$C/two.toml" <<'EOF'
name = "files/two"
analysis = true
[defaults]
time = "00:05:00"
partition = "p1"
[[sweep]]
bench = "allreduce"
nodes = [1, 2]
scaling = ["strong", "weak"]
args = ["--sizes", "8,1K", "-a", "ring"]
[[sweep]]
bench = "bucket_sweep"
tasks_per_node = [1, 2]
array_mode = true
launcher = "mpirun"
time = 3
args = ["--layout", "resnet50"]
EOF
cat >"$C/two.json" <<'EOF'
{"name": "files/two", "analysis": true, "defaults": {"time": "00:05:00", "partition": "p1"},
 "sweep": [{"bench": "allreduce", "nodes": [1, 2], "scaling": ["strong", "weak"], "args": ["--sizes", "8,1K", "-a", "ring"]},
           {"bench": "bucket_sweep", "tasks_per_node": [1, 2], "array_mode": true, "launcher": "mpirun", "time": 3,
            "args": ["--layout", "resnet50"]}]}
EOF
out=$("$SUB" --file "$C/two.toml" --dry-run 2>&1)
lines=$(grep '^sbatch ' <<<"$out" | grep -o -- '--job-name=[^ ]*' | tr '\n' ' ')
if [ "$lines" = "--job-name=sp-allreduce-N1t1c1 --job-name=sp-allreduce-N2t1c1 --job-name=sp-allreduce-N1t1c1_weak --job-name=sp-allreduce-N2t1c1_weak --job-name=sp-bucket_sweep-array_mpirun --job-name=sp-report " ] &&
   grep -q -- '^sbatch --parsable --job-name=sp-allreduce-N2t1c1_weak --nodes=2 .*--time=00:05:00 --partition=p1 --exclusive --output=[^ ]*/files/two/logs/allreduce_N2_t1_c1_weak_j%j.out .*SCALEPROBE_SCALING=weak,.* [^ ]*/jobs/allreduce.sbatch --sizes 8,1K -a ring$' <<<"$out" &&
   grep -q -- '--array=0-1 --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=3 --partition=p1 .*SCALEPROBE_LAUNCHER=mpirun,.*SCALEPROBE_ARRAY_POINTS=1x1x1:1x2x1 [^ ]*/jobs/bucket_sweep.sbatch --layout resnet50$' <<<"$out" &&
   grep -q -- "--job-name=sp-report --ntasks=1 --time=00:05:00 --partition=p1 '--dependency=afterany:<job ids of the jobs above>'" <<<"$out" &&
   grep -q '^# dry run: 6 point(s) to run' <<<"$out" && [ ! -e "$W/results/files" ]; then ok "campaign file: expansion in order, defaults, per-sweep time, array, report"
else no "campaign file dry run: $out"; fi
[ "$out" = "$("$SUB" --file "$C/two.json" --dry-run 2>&1)" ] && ok "the same campaign as JSON gives the same lines" || no "TOML and JSON differ"
out=$("$SUB" --file "$C/two.toml" --campaign other --time 9 --nodes 4 --dry-run 2>&1)
[ "$(grep -c -- '^sbatch .*--nodes=4 .*--time=9 --partition=p1 --exclusive --output=[^ ]*/other/logs/' <<<"$out")" = 3 ] &&
  grep -q -- '--job-name=sp-report --ntasks=1 --time=9 ' <<<"$out" &&
  ok "flags beside --file override the file (campaign, time, nodes)" || no "overrides: $out"
bad_file() {  # bad_file NAME PATTERN TOML-TEXT: the file is refused with one line naming it
  printf '%s\n' "$3" >"$C/bad.toml"
  expect_error "$1" "$C/bad.toml: $2" "$SUB" --file "$C/bad.toml" --dry-run
}
bad_file "campaign file: unknown sweep key" "sweep\[2\]: unknown key 'nodez'" $'name = "b"\n[[sweep]]\nbench = "allreduce"\n[[sweep]]\nbench = "allreduce"\nnodez = 2'
bad_file "campaign file: unknown top-level key" "unknown key 'sweeps'" $'name = "b"\n[[sweeps]]\nbench = "allreduce"'
bad_file "campaign file: bad scaling" 'sweep\[1\]\.scaling = "medium": use strong or weak' $'name = "b"\n[[sweep]]\nbench = "allreduce"\nscaling = "medium"'
bad_file "campaign file: wrong type" 'sweep\[1\]\.nodes = "1,2": expected a positive integer or a list of them' $'name = "b"\n[[sweep]]\nbench = "allreduce"\nnodes = "1,2"'
bad_file "campaign file: a boolean is not a count" 'sweep\[1\]\.repeat = true: not a positive number of passes' $'name = "b"\n[[sweep]]\nbench = "allreduce"\nrepeat = true'
bad_file "campaign file: bad default" 'defaults\.time = "1h": use minutes' $'name = "b"\n[defaults]\ntime = "1h"\n[[sweep]]\nbench = "allreduce"'
bad_file "campaign file: bench required" 'sweep\[1\]: bench is required' $'name = "b"\n[[sweep]]\nnodes = 2'
bad_file "campaign file: name required" 'name is required' $'[[sweep]]\nbench = "allreduce"'
bad_file "campaign file: bad args" "sweep\[1\]\.args: do not pass -o" $'name = "b"\n[[sweep]]\nbench = "allreduce"\nargs = ["-o", "x.h5"]'
bad_file "campaign file: requeue on a collective" 'sweep\[1\]\.requeue = true: requeue is for trainer jobs' $'name = "b"\n[[sweep]]\nbench = "allreduce"\nrequeue = true'
bad_file "campaign file: one point in two sweeps" 'sweep\[1\] and sweep\[2\] both list point allreduce_N2_t1_c1' $'name = "b"\n[[sweep]]\nbench = "allreduce"\nnodes = [1, 2]\n[[sweep]]\nbench = "allreduce"\nnodes = 2'
bad_file "campaign file: not TOML" 'not valid TOML' $'name = "b"\n[[sweep]\nbench = "allreduce"'
expect_error "campaign file: --bench beside --file refused" '--bench cannot be combined with --file' "$SUB" --file "$C/two.toml" --bench allreduce --dry-run
expect_error "campaign file: missing file" "--file $C/none.toml: no such file" "$SUB" --file "$C/none.toml"
expect "the example campaign expands" 0 '^# dry run: [0-9]+ point\(s\) to run' "$SUB" --file "$ROOT/jobs/campaigns/example.toml" --dry-run

# --- resume in a dry run: a valid trace under the point's name is skipped ---
mkdir -p "$W/results/r"
cp "$REAL" "$W/results/r/allreduce_N1_t1_c1_j3.h5"
echo partial >"$W/results/r/allreduce_N1_t2_c1_j4.h5.partial"
out=$("$SUB" --bench allreduce --campaign r --tasks-per-node 1,2 --dry-run 2>&1)
grep -q '^# skip allreduce_N1_t1_c1: complete' <<<"$out" && [ "$(grep -c '^sbatch ' <<<"$out")" = 1 ] &&
  grep -q 'would rename .*allreduce_N1_t2_c1_j4.h5.partial' <<<"$out" && [ -e "$W/results/r/allreduce_N1_t2_c1_j4.h5.partial" ] &&
  [ ! -e "$W/results/r/manifest.tsv" ] && [ ! -e "$W/results/r/campaign.json" ] &&
  ok "dry-run resume: complete point skipped, stale partial reported, not touched" || no "dry-run resume: $out"

# --- resume per (point, pass), for real, with a fake sbatch and squeue ---
mkdir -p "$W/slurm"
cat >"$W/slurm/sbatch" <<'FAKE'
#!/bin/bash
# fake sbatch: job ids 101, 102, ... (counter in $FAKE_SLURM/next); logs its arguments and
# whether SCALEPROBE_PASS came from the caller's environment
d=$FAKE_SLURM; id=$(cat "$d/next" 2>/dev/null || echo 101); echo $((id + 1)) >"$d/next"
echo "$id $* env_pass=${SCALEPROBE_PASS:-none}" >>"$d/sbatch.log"
echo "$id"
FAKE
cat >"$W/slurm/squeue" <<'FAKE'
#!/bin/bash
# fake squeue: the ids in $FAKE_SLURM/queue are pending or running
cat "$FAKE_SLURM/queue" 2>/dev/null; exit 0
FAKE
chmod +x "$W/slurm/sbatch" "$W/slurm/squeue"
export FAKE_SLURM=$W/slurm
# shellcheck disable=SC2054  # the commas are values (--tasks-per-node 1,2)
S=(env PATH="$W/slurm:$PATH" SCALEPROBE_PASS=9 "$SUB" --bench allreduce --campaign rs --tasks-per-node 1,2 --repeat 2 --analysis -- --sizes 8)
RS=$W/results/rs
out=$("${S[@]}" 2>&1); rc=$?
# col NAME [MANIFEST]: the column's values, one line
col() { awk -F'\t' -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { print $k }' "${2:-$RS/manifest.tsv}" | tr '\n' ' '; }
if [ "$rc" = 0 ] && [ "$(grep -c '^#   -> job ' <<<"$out")" = 5 ] &&
   [ "$(head -1 "$RS/manifest.tsv")" = "$MANIFEST_HEADER" ] &&
   [ "$(col pass)" = "1 1 2 2  " ] && [ "$(col status)" = "submitted submitted submitted submitted report " ] &&
   [ "$(col job_id)" = "101 102 103 104 105 " ] &&
   [ "$(col trace | cut -d' ' -f4)" = "$RS/allreduce_N1_t2_c1_p2_j104.h5" ] &&
   grep -q '^105 .*--dependency=afterany:101:102:103:104 ' "$FAKE_SLURM/sbatch.log" &&
   ! grep -q 'env_pass=9' "$FAKE_SLURM/sbatch.log" && [ -d "$RS/logs" ] &&
   /usr/bin/python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); assert len(h)==1 and h[0]["campaign"]["sweeps"][0]["repeat"]==2 and "--repeat 2" in h[0]["command"]' "$RS/campaign.json"
then ok "submission: 4 (point, pass) jobs, manifest with pass, afterany report on all, campaign.json"
else no "submission (exit $rc): $out; manifest: $(cat "$RS/manifest.tsv" 2>/dev/null); sbatch: $(cat "$FAKE_SLURM/sbatch.log")"; fi
# 101 (N1 t1 pass 1) finished, 104 (N1 t2 pass 2) still queued, 103 (N1 t1 pass 2) killed with a
# partial trace, 102 (N1 t2 pass 1) failed without a trace.
cp "$REAL" "$RS/allreduce_N1_t1_c1_j101.h5"
echo partial >"$RS/allreduce_N1_t1_c1_p2_j103.h5.partial"
echo 104 >"$FAKE_SLURM/queue"
out=$("${S[@]}" 2>&1); rc=$?
if [ "$rc" = 0 ] && grep -q "^# skip allreduce_N1_t1_c1: complete ($RS/allreduce_N1_t1_c1_j101.h5)\$" <<<"$out" &&
   grep -q '^# skip allreduce_N1_t2_c1_p2: job 104 is still queued or running$' <<<"$out" &&
   grep -q "^# renamed $RS/allreduce_N1_t1_c1_p2_j103.h5.partial to $RS/allreduce_N1_t1_c1_p2_j103.h5.partial.failed\$" <<<"$out" &&
   [ "$(grep '^sbatch ' <<<"$out" | grep -o -- '--job-name=[^ ]*' | tr '\n' ' ')" = "--job-name=sp-allreduce-N1t2c1 --job-name=sp-allreduce-N1t1c1_p2 --job-name=sp-report " ] &&
   grep -q '^108 .*--dependency=afterany:104:106:107 ' "$FAKE_SLURM/sbatch.log" &&
   [ "$(col status | cut -d' ' -f6-)" = "complete queued submitted submitted report " ] &&
   [ "$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$RS/campaign.json")" = 2 ]
then ok "resume per (point, pass): complete and queued skipped, partial renamed, the rest resubmitted"
else no "resume (exit $rc): $out; manifest: $(cat "$RS/manifest.tsv")"; fi
# A manifest written by the bash submitter (no pass or backend column): still read; rewritten with
# the pass and backend columns (pass 1, backend mpi) before the first new line is appended.
OLD=$W/results/old && mkdir -p "$OLD"
printf 'submitted_utc\tbenchmark\tnodes\ttasks_per_node\tcpus_per_task\tgpus_per_node\tscaling\tlauncher\tstatus\tjob_id\ttrace\tlog\tsbatch_command\n' >"$OLD/manifest.tsv"
printf '2026-01-01T00:00:00Z\tallreduce\t1\t1\t1\t0\tstrong\tsrun\tsubmitted\t50\t%s\t%s\tsbatch x\n' "$OLD/allreduce_N1_t1_c1_j50.h5" "$OLD/logs/x.out" >>"$OLD/manifest.tsv"
echo 50 >"$FAKE_SLURM/queue"
out=$(env PATH="$W/slurm:$PATH" "$SUB" --bench allreduce --campaign old --tasks-per-node 1,2 --dry-run 2>&1)
grep -q '^# skip allreduce_N1_t1_c1: job 50 is still queued or running$' <<<"$out" && [ "$(grep -c '^sbatch ' <<<"$out")" = 1 ] &&
  [ "$(wc -l <"$OLD/manifest.tsv")" = 2 ] && ok "old manifest read in a dry run (queued point skipped), not rewritten" || no "old manifest dry run: $out"
out=$(env PATH="$W/slurm:$PATH" "$SUB" --bench allreduce --campaign old --tasks-per-node 1,2 2>&1)
if grep -q '^# skip allreduce_N1_t1_c1: job 50 is still queued' <<<"$out" && [ "$(head -1 "$OLD/manifest.tsv")" = "$MANIFEST_HEADER" ] &&
   [ "$(col backend "$OLD/manifest.tsv" | cut -d' ' -f1) $(col pass "$OLD/manifest.tsv" | cut -d' ' -f1)" = "mpi 1" ] &&
   [ "$(col status "$OLD/manifest.tsv" | cut -d' ' -f1) $(col job_id "$OLD/manifest.tsv" | cut -d' ' -f1)" = "submitted 50" ] &&
   [ "$(awk -F'\t' '{ print NF }' "$OLD/manifest.tsv" | sort -u)" = "$(awk -F'\t' '{ print NF }' <<<"$MANIFEST_HEADER")" ] &&
   [ "$(wc -l <"$OLD/manifest.tsv")" = 4 ]
then ok "old manifest converted to the pass and backend columns, then appended to"
else no "old manifest: $out; $(cat "$OLD/manifest.tsv")"; fi
cat >"$W/slurm/sbatch" <<'FAKE'
#!/bin/bash
echo "sbatch: error: Batch job submission failed: Invalid account" >&2; exit 1
FAKE
expect "a failing sbatch: its message, then the error line, exit 2" 2 '^submit-sweep: error: sbatch failed \(see its message above\)$' \
  env PATH="$W/slurm:$PATH" "$SUB" --bench allreduce --campaign f --tasks-per-node 3

offline_done
