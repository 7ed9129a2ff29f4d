# Shared by trainers/gpt/bench_vs_torch.sh and trainers/resnet/bench_vs_torch.sh, which source it
# after setting here (the calling script's directory), name_width (of the impl column), rate (the
# bench_torch.py JSON key of the throughput, e.g. tokens_per_s), per_step (units per step and rank
# batch row: the trace attribute, e.g. tokens_per_step) and rate_decimals. Both benchmarks take
# the same arguments and print the same columns.
#
#   bench_setup <trainer> <default model> <default batch> "$@"
#       parses [trainer binary] [model] [batch] [steps] [threads...] into bin, model, batch,
#       steps (default 14) and threads (default "1 2"), makes $tmp (removed at exit), binds
#       OPENBLAS_NUM_THREADS with OMP_NUM_THREADS for both sides, prints the header
#   trainer_row <trace.h5> <name> <threads>   the trainer's row, from its trace's steps table
#   torch_row <threads> [init checkpoint]     runs $here/bench_torch.py (from the trainer's
#                                             --save-init weights) and prints its row
#
# Both sides: the first WARMUP_STEPS (trainers/common/torch_peer.py) steps are excluded, the
# rate is computed from the MEDIAN step time, the mean is shown beside it, and each side's loss
# at its first step is printed (the same weights give the same loss up to the random batch). A
# torch row whose kernel-relevant environment differs from the trainer's is refused.
WARMUP_STEPS=$(/usr/bin/python3 -c "import sys; sys.path.insert(0, '$(dirname "${BASH_SOURCE[0]}")'); import torch_peer; print(torch_peer.WARMUP_STEPS)" 2>/dev/null || echo 3)

bench_setup() {
  local trainer=$1 default_model=$2 default_batch=$3
  shift 3
  bin=${1:-$here/../../build/release/trainers/${trainer%_train}/$trainer}
  model=${2:-$default_model} batch=${3:-$default_batch} steps=${4:-14}
  shift $(( $# < 4 ? $# : 4 )) || true
  threads=${*:-1 2}
  [ -x "$bin" ] || { echo "bench_vs_torch.sh: error: $trainer not found at '$bin'" >&2; exit 1; }
  [ "$steps" -gt "$WARMUP_STEPS" ] || { echo "bench_vs_torch.sh: error: steps $steps: more than the $WARMUP_STEPS warm-up steps needed" >&2; exit 2; }
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  echo "# $model, batch $batch, $steps steps (first $WARMUP_STEPS excluded on both sides), host $(hostname)," \
       "load $(cut -d' ' -f1-3 /proc/loadavg); rate from the median step"
  printf "%-${name_width}s %7s %10s %10s %10s %8s %10s %10s\n" impl threads "median ms" "mean ms" "cpu ms" cpu/wall \
      "${rate%_per_s}/s" "loss@1"
}

trainer_row() {
  /usr/bin/python3 - "$1" "$2" "$3" "$name_width" "$rate" "$rate_decimals" "$per_step" "$WARMUP_STEPS" <<'PY'
import statistics, sys, h5py
path, name, threads, width, rate, decimals, per_step, warmup = sys.argv[1:]
with h5py.File(path) as f:
    s = f["steps"]
    order = s["step"][:].argsort()
    wall = s["step_wall_s"][:][order][int(warmup):]
    cpu = s["step_process_cpu_s"][:][order][int(warmup):]
    first_loss = float(s["loss"][:][order][0])
    units = float(f.attrs[per_step])
med = statistics.median(wall)
print(f"{name:<{width}} {threads:>7} {med*1e3:>10.1f} {wall.mean()*1e3:>10.1f} {cpu.mean()*1e3:>10.1f} "
      f"{cpu.mean()/wall.mean():>8.2f} {units/med:>10.{decimals}f} {first_loss:>10.4f}")
PY
}

torch_row() {
  local init=()
  [ -z "${2:-}" ] || init=(--init "$2")
  OMP_NUM_THREADS=$1 OPENBLAS_NUM_THREADS=$1 /usr/bin/python3 "$here/bench_torch.py" --model "$model" --threads "$1" \
      --batch "$batch" --steps "$steps" "${init[@]}" > "$tmp/torch$1.json"
  /usr/bin/python3 - "$tmp/torch$1.json" "$name_width" "$rate" "$rate_decimals" "$tmp/sp$1.h5" <<'PY'
import json, sys, h5py
path, width, rate, decimals, trace = sys.argv[1:]
r = json.load(open(path))
with h5py.File(trace) as f:  # the trainer's row of the same thread count ran under this environment
    prefixes = ("OMP_", "OPENBLAS_", "GOTO_", "MKL_", "KMP_", "GOMP_", "ONEDNN_", "DNNL_")
    theirs = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in f["provenance/env"].attrs.items()
              if k.startswith(prefixes)}
if theirs != r["kernel_env"]:
    sys.exit(f"bench_vs_torch.sh: error: the two sides ran under different kernel environments: "
             f"trainer {theirs}, torch {r['kernel_env']}")
print(f"{r['impl']:<{width}} {r['threads']:>7} {r['wall_median_s']*1e3:>10.1f} {r['wall_mean_s']*1e3:>10.1f} "
      f"{r['cpu_mean_s']*1e3:>10.1f} {r['cpu_mean_s']/r['wall_mean_s']:>8.2f} {r[rate]:>10.{decimals}f} "
      f"{r['first_loss']:>10.4f}")
PY
}
