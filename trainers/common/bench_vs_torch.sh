# Shared by trainers/gpt/bench_vs_torch.sh and trainers/resnet/bench_vs_torch.sh, which source it
# after setting here (the calling script's directory), name_width (of the impl column), rate (the
# trace attribute and bench_torch.py JSON key of the throughput, e.g. tokens_per_s) and
# rate_decimals. Both benchmarks thus take the same arguments and print the same columns.
#
#   bench_setup <trainer> <default model> <default batch> "$@"
#       parses [trainer binary] [model] [batch] [steps] [threads...] into bin, model, batch,
#       steps (default 8) and threads (default "1 2"), makes $tmp (removed at exit) and prints
#       the header and the column names
#   trainer_row <trace.h5> <name> <threads>   the trainer's row, from its trace
#   torch_row <threads>                       runs $here/bench_torch.py and prints its row

bench_setup() {
  local trainer=$1 default_model=$2 default_batch=$3
  shift 3
  bin=${1:-$here/../../build/release/trainers/${trainer%_train}/$trainer}
  model=${2:-$default_model} batch=${3:-$default_batch} steps=${4:-8}
  shift $(( $# < 4 ? $# : 4 )) || true
  threads=${*:-1 2}
  [ -x "$bin" ] || { echo "bench_vs_torch.sh: error: $trainer not found at '$bin'" >&2; exit 1; }
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  echo "# $model, batch $batch, $steps steps (first excluded), host $(hostname), load $(cut -d' ' -f1-3 /proc/loadavg)"
  printf "%-${name_width}s %7s %14s %14s %8s %10s\n" impl threads "wall ms/step" "cpu ms/step" cpu/wall \
      "${rate%_per_s}/s"
}

# Mean over the summarised steps (in_summary: the first step is excluded).
trainer_row() {
  /usr/bin/python3 - "$1" "$2" "$3" "$name_width" "$rate" "$rate_decimals" <<'PY'
import sys, h5py
path, name, threads, width, rate, decimals = sys.argv[1:]
with h5py.File(path) as f:
    s = f["steps"]; keep = s["in_summary"][:] == 1
    wall = s["step_wall_s"][:][keep]; cpu = s["step_process_cpu_s"][:][keep]
    print(f"{name:<{width}} {threads:>7} {wall.mean()*1e3:>14.1f} {cpu.mean()*1e3:>14.1f} "
          f"{cpu.mean()/wall.mean():>8.2f} {f.attrs[rate]:>10.{decimals}f}")
PY
}

torch_row() {
  OMP_NUM_THREADS=$1 /usr/bin/python3 "$here/bench_torch.py" --model "$model" --threads "$1" --batch "$batch" \
      --steps "$steps" > "$tmp/torch$1.json"
  /usr/bin/python3 - "$tmp/torch$1.json" "$name_width" "$rate" "$rate_decimals" <<'PY'
import json, sys
path, width, rate, decimals = sys.argv[1:]
r = json.load(open(path))
print(f"{r['impl']:<{width}} {r['threads']:>7} {r['wall_mean_s']*1e3:>14.1f} {r['cpu_mean_s']*1e3:>14.1f} "
      f"{r['cpu_mean_s']/r['wall_mean_s']:>8.2f} {r[rate]:>10.{decimals}f}")
PY
}
