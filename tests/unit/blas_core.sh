#!/usr/bin/env bash
# The BLAS kernel core chosen at start-up (kernels/blas.hpp, rule in kernels/blas_core.hpp), through
# the real programs and OpenBLAS:
#  1. OpenBLAS' detection made to report Prescott (SCALEPROBE_TEST_BLAS_DETECTED): the program starts
#     again with this CPU's best core, keeping its pid, argv (a path with spaces) and process name
#     (execv of /proc/self/exe would call it "exe"), and its header,
#     trace attributes, per-rank table and recorded environment name that core and why; no warning;
#     the same for resnet_train and bench_kernels;
#  2. OPENBLAS_CORETYPE=Prescott set by the user: the run goes on with it (exit 0) and says so in
#     exactly one warning line, none where the launcher's variables name another rank than 0;
#     OPENBLAS_CORETYPE=Haswell (as some machines set): no warning;
#  3. OpenBLAS' own detection: no warning, and a replaced core is the best one;
#  4. the edges: a program started through the dynamic loader cannot start itself again (one warning
#     line, the run goes on); a re-executed process that did not get the chosen core says so once;
#  np2: under the MPI launcher at 2 ranks both ranks start again (same pids) and one warning line
#     stands for the job.
# The expected core comes from /proc/cpuinfo by the documented rule, so any CPU passes; the
# machine's own OPENBLAS_* settings are removed from every run.
#   blas_core.sh BUILD_DIR [np2]
set -u
B=$1 mode=${2:-}
# shellcheck source=../lib/expect_error.sh
source "$(dirname "$0")/../lib/expect_error.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
has() { [[ $flags == *" $1 "* ]]; }
vendor=$(grep -m1 '^vendor_id' /proc/cpuinfo | awk '{print $3}')
if has avx512f && has avx512bw && has avx512dq && has avx512vl; then
  if has avx512_bf16; then best=Cooperlake; else best=SkylakeX; fi
elif has avx2 && has fma; then
  case $vendor in AuthenticAMD | HygonGenuine) best=Zen ;; *) best=Haswell ;; esac
else
  best=""  # below AVX2 nothing is changed
fi
echo "this CPU: $vendor, $( (has avx512f && echo AVX-512) || (has avx2 && echo AVX2) || echo "no AVX2"); best core: ${best:-none}"

# Every run starts from a clean slate: none of the machine's OPENBLAS_* or our variables.
clean=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE -u OPENBLAS_VERBOSE -u SCALEPROBE_BLAS_CORE_DETECTED
       -u SCALEPROBE_TEST_BLAS_DETECTED OMP_NUM_THREADS=1)
gpt_steps=("$B/bin/gpt_train" -m gpt-micro --synthetic-bytes 100000 --val-batches 0 -B 1 -q -s)
gpt=("${gpt_steps[@]}" 1)
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() {  # check <description> <command...>: one check, failed when the command fails
  local what=$1; shift
  checks=$((checks + 1))
  "$@" || fail "$what"
}
# The trace's value at <path> (an attribute "group/name", "/name" for the root, or a column
# "table/column" whose rows are joined with spaces).
h5get() {
  /usr/bin/python3 - "$@" <<'EOF'
import h5py, sys
def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)
with h5py.File(sys.argv[1]) as f:
    group, name = sys.argv[2].rsplit("/", 1)
    g = f[group or "/"]
    print(text(g.attrs[name]) if name in g.attrs else " ".join(text(x) for x in g[name][()]))
EOF
}
stderr_lines() { grep -c . "$1"; }
# run <name> <command...>: stdout, stderr and exit code in $tmp/<name>.{out,err,rc}, pid in $tmp/<name>.pid
run() {
  local name=$1; shift
  "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  echo $! >"$tmp/$name.pid"
  wait $!
  echo $? >"$tmp/$name.rc"
}
ran_ok() {
  [ "$(cat "$tmp/$1.rc")" = 0 ] || { echo "    exit $(cat "$tmp/$1.rc"):"; sed 's/^/    /' "$tmp/$1.err"; return 1; }
}
no_stderr() {
  [ "$(stderr_lines "$tmp/$1.err")" = 0 ] || { sed 's/^/    /' "$tmp/$1.err"; return 1; }
}
one_warning() {  # exactly one stderr line, a warning containing $2
  [ "$(stderr_lines "$tmp/$1.err")" = 1 ] && grep -q "^[a-z_]*: warning: " "$tmp/$1.err" && grep -qF -- "$2" "$tmp/$1.err" ||
    { sed 's/^/    /' "$tmp/$1.err"; return 1; }
}
header_has() { grep -qF -- "$2" "$tmp/$1.out" || { grep 'BLAS:' "$tmp/$1.out" | sed 's/^/    /'; return 1; }; }
equals() { [ "$1" = "$2" ] || { echo "    got '$1', wanted '$2'"; return 1; }; }
starts_with() { [[ $1 == "$2"* ]] || { echo "    got '$1', wanted it to start with '$2'"; return 1; }; }

chosen_reason="chosen by scaleprobe: OpenBLAS detected Prescott on a CPU with "
if [ "$mode" = np2 ]; then
  mpiexec=${SP_MPIEXEC:-mpirun}
  if [ -n "$best" ]; then
    run np2_chosen "${clean[@]}" SCALEPROBE_TEST_BLAS_DETECTED=Prescott "$mpiexec" -n 2 "${gpt[@]}" -o "$tmp/np2.h5"
    check "2 ranks with the detection made generic ran" ran_ok np2_chosen
    check "2 ranks with the detection made generic: no stderr" no_stderr np2_chosen
    check "every rank ran $best" equals "$(h5get "$tmp/np2.h5" ranks/blas_core)" "$best $best"
    check "the reason at 2 ranks" starts_with "$(h5get "$tmp/np2.h5" /blas_core_reason)" "$chosen_reason"
    run np2_forced "${clean[@]}" OPENBLAS_CORETYPE=Prescott "$mpiexec" -n 2 "${gpt[@]}" -o "$tmp/np2f.h5"
    check "2 ranks with OPENBLAS_CORETYPE=Prescott ran" ran_ok np2_forced
    check "2 ranks with OPENBLAS_CORETYPE=Prescott: one warning line for the job" \
      one_warning np2_forced "OPENBLAS_CORETYPE=Prescott runs OpenBLAS' generic SSE kernels (Prescott)"
    check "both ranks ran Prescott" equals "$(h5get "$tmp/np2f.h5" ranks/blas_core)" "Prescott Prescott"
  else
    run np2_chosen "${clean[@]}" SCALEPROBE_TEST_BLAS_DETECTED=Prescott "$mpiexec" -n 2 "${gpt[@]}" -o "$tmp/np2.h5"
    check "2 ranks on a CPU below AVX2 ran" ran_ok np2_chosen
  fi
  finish blas_core.np2
  exit
fi

# 1. The detection made generic: started again with the best core, same pid, argv and process name
# (read while the run writes its trace, i.e. after the re-execution: 400 steps keep it running for
# the poll below on a fast CPU too; 20 ended between two polls on a 2026 Xeon).
mkdir -p "$tmp/with space"
"${clean[@]}" SCALEPROBE_TEST_BLAS_DETECTED=Prescott "${gpt_steps[@]}" 400 -o "$tmp/with space/chosen.h5" \
  >"$tmp/chosen.out" 2>"$tmp/chosen.err" &
pid=$!
echo $pid >"$tmp/chosen.pid"
name=""
for _ in $(seq 1 600); do
  [ -e "$tmp/with space/chosen.h5.partial" ] && { name=$(cat "/proc/$pid/comm" 2>/dev/null); break; }
  kill -0 $pid 2>/dev/null || break
  sleep 0.02
done
wait $pid
echo $? >"$tmp/chosen.rc"
check "the re-executed process keeps its name (not 'exe')" equals "$name" "gpt_train"
check "gpt_train with the detection made generic ran" ran_ok chosen
check "gpt_train with the detection made generic: no stderr" no_stderr chosen
t="$tmp/with space/chosen.h5"
if [ -n "$best" ]; then
  check "header names $best and why" header_has chosen "core=$best ($chosen_reason"
  check "trace blas_core" equals "$(h5get "$t" /blas_core)" "$best"
  check "trace blas_core_reason" starts_with "$(h5get "$t" /blas_core_reason)" "$chosen_reason"
  check "provenance blas_core_reason" starts_with "$(h5get "$t" provenance/blas_core_reason)" "$chosen_reason"
  check "per-rank blas_core" equals "$(h5get "$t" ranks/blas_core)" "$best"
  check "recorded OPENBLAS_CORETYPE" equals "$(h5get "$t" provenance/env/OPENBLAS_CORETYPE)" "$best"
  check "recorded detection" equals "$(h5get "$t" provenance/env/SCALEPROBE_BLAS_CORE_DETECTED)" "Prescott"
  check "blas_config names the core OpenBLAS runs" starts_with "$(h5get "$t" /blas_config | sed 's/.* core=/core=/')" "core=$best"
else
  check "header: detected by OpenBLAS" header_has chosen "(detected by OpenBLAS)"
fi
check "the same process (pid) started again" equals "$(h5get "$t" ranks/pid)" "$(cat "$tmp/chosen.pid")"
check "the same argv" equals "$(h5get "$t" provenance/command_line)" "${gpt_steps[*]} 400 -o $tmp/with space/chosen.h5"

if [ -n "$best" ]; then
  R=("$B/bin/resnet_train" -m resnet20 --width 4 --depth 8 -s 1 -B 2 -q --synthetic-images 64 --synthetic-test 16)
  run resnet "${clean[@]}" SCALEPROBE_TEST_BLAS_DETECTED=Prescott "${R[@]}" -o "$tmp/resnet.h5"
  check "resnet_train with the detection made generic ran" ran_ok resnet
  check "resnet_train header" header_has resnet "core=$best ($chosen_reason"
  if [ -x "$B/kernels/bench_kernels" ]; then
    run bench "${clean[@]}" SCALEPROBE_TEST_BLAS_DETECTED=Prescott "$B/kernels/bench_kernels" \
      --benchmark_filter=BM_adamw --benchmark_min_time=0.01 --benchmark_format=json
    check "bench_kernels with the detection made generic ran" ran_ok bench
    check "bench_kernels context" header_has bench "core=$best ($chosen_reason"
  fi
fi

# 2. The user's choice: run as given; a generic one on a vector CPU said once.
run forced "${clean[@]}" OPENBLAS_CORETYPE=Prescott "${gpt[@]}" -o "$tmp/forced.h5"
check "OPENBLAS_CORETYPE=Prescott: the run goes on" ran_ok forced
if [ -n "$best" ]; then
  check "OPENBLAS_CORETYPE=Prescott: exactly one warning line" \
    one_warning forced "OPENBLAS_CORETYPE=Prescott runs OpenBLAS' generic SSE kernels (Prescott) on a CPU with"
  check "the warning names the better core" grep -qF "this CPU's $best kernels" "$tmp/forced.err"
else
  check "OPENBLAS_CORETYPE=Prescott below AVX2: no warning" no_stderr forced
fi
check "forced: header" header_has forced "core=Prescott (forced by OPENBLAS_CORETYPE=Prescott)"
check "forced: trace" equals "$(h5get "$tmp/forced.h5" /blas_core_reason)" "forced by OPENBLAS_CORETYPE=Prescott"
# Before MPI_Init the rank comes from the launcher's variables (MPICH's Hydra, PMIx, srun; Open MPI's
# in np2): a rank other than 0 stays silent.
for v in PMI_RANK=1 PMIX_RANK=1 SLURM_PROCID=1; do
  run "rank_${v%%=*}" "${clean[@]}" "$v" OPENBLAS_CORETYPE=Prescott "${gpt[@]}" -o "$tmp/rank.h5"
  check "$v, OPENBLAS_CORETYPE=Prescott: ran" ran_ok "rank_${v%%=*}"
  check "$v, OPENBLAS_CORETYPE=Prescott: no warning from a rank other than 0" no_stderr "rank_${v%%=*}"
done
run haswell "${clean[@]}" OPENBLAS_CORETYPE=Haswell "${gpt[@]}" -o "$tmp/haswell.h5"
check "OPENBLAS_CORETYPE=Haswell ran" ran_ok haswell
check "OPENBLAS_CORETYPE=Haswell: no warning" no_stderr haswell
check "OPENBLAS_CORETYPE=Haswell: header" header_has haswell "core=Haswell (forced by OPENBLAS_CORETYPE=Haswell)"

# 3. OpenBLAS' own detection: kept, or replaced by the best core; silent either way.
run own "${clean[@]}" "${gpt[@]}" -o "$tmp/own.h5"
check "OpenBLAS' own detection ran" ran_ok own
check "OpenBLAS' own detection: no stderr" no_stderr own
reason=$(h5get "$tmp/own.h5" /blas_core_reason)
echo "OpenBLAS' own detection here: $(h5get "$tmp/own.h5" /blas_core) ($reason)"
if [[ $reason == "chosen by scaleprobe:"* ]]; then
  check "a replaced detection runs $best" equals "$(h5get "$tmp/own.h5" /blas_core)" "$best"
else
  check "the reason of a kept detection" equals "$reason" "detected by OpenBLAS"
fi

# 4. Edges. Through the dynamic loader /proc/self/exe is the loader: no re-execution, one warning.
loader=$(readelf -l "$B/bin/gpt_train" 2>/dev/null | sed -n 's/.*interpreter: \(.*\)]/\1/p')
if [ -n "$best" ] && [ -x "$loader" ]; then
  run loader "${clean[@]}" SCALEPROBE_TEST_BLAS_DETECTED=Prescott "$loader" "${gpt[@]}" -o "$tmp/loader.h5"
  check "through the loader: the run goes on" ran_ok loader
  check "through the loader: one warning line" one_warning loader \
    "scaleprobe could not start again with $best (started through the dynamic loader"
  check "through the loader: the reason" header_has loader "(detected by OpenBLAS; scaleprobe chose $best but could not start again"
fi
# A re-executed process whose OpenBLAS did not take the chosen core (Katmai runs as Prescott):
# one warning line, no second re-execution.
run refused "${clean[@]}" SCALEPROBE_BLAS_CORE_DETECTED=Prescott OPENBLAS_CORETYPE=Katmai "${gpt[@]}" -o "$tmp/refused.h5"
check "a refused choice: the run goes on" ran_ok refused
check "a refused choice: one warning line" one_warning refused "OpenBLAS runs its Prescott kernels, not the Katmai ones"
check "a refused choice: the reason" starts_with "$(h5get "$tmp/refused.h5" /blas_core_reason)" \
  "chosen by scaleprobe: OpenBLAS detected Prescott on a CPU with"
finish blas_core
