#!/usr/bin/env bash
# Data-parallel step latency of gpt_train against PyTorch DDP (gloo) on the CPU, per bucket cap.
#
#   trainers/gpt/bench_ddp_vs_torch.sh [--out DIR] [--bind none|core] [--torch-comm-timing]
#       [gpt_train] [model] [batch-per-rank] [steps] [caps] [ranks] [threads-per-rank]
#   defaults: build/release/trainers/gpt/gpt_train gpt-tiny 8 6 1,5,25,100 2 1
#
# steps = summarised steps per cap, implementation and pass. Two passes, each
#   mpirun -np RANKS gpt_train -m MODEL -B BATCH -a ring --bucket-cap-mb CAPS   (scaleprobe)
#   bench_ddp_torch.py --ranks RANKS --batch BATCH --caps CAPS                   (torch DDP, gloo)
# in the order A B A B so drift of a shared machine shows; both cycle their steps round robin
# over the caps (torch also over a no_sync case: its compute-only reference). Then the 1-rank
# runs of both with the same per-rank batch and caps: weak-scaling efficiency = t(1 rank) /
# t(RANKS) at the best cap, t(1 rank) being the mean over all its summarised steps. Warm-up:
# gpt_train excludes its first round of caps, torch its first two (DDP reduces the first step in
# one bucket and rebuilds the buckets at the second).
#
# Iteration = per step the SLOWEST rank's step time (forward + backward + wait + optimizer),
# mean and median over the summarised steps. compute = forward + backward + optimizer (torch:
# the no_sync case's step, an estimate). exposed = backward's wait for outstanding buckets,
# measured for scaleprobe; for torch an ESTIMATE, step(cap) - step(no_sync), marked '~' (with
# --torch-comm-timing a timing Python comm hook measures it, at some cost). 'hidden' (gpt_train only):
# 1 - exposed / the same buckets' no-overlap allreduce measured in the run (docs/trace-schema.md).
# --bind is mpirun's --bind-to for gpt_train (default none: on a shared 2-core machine pinning a
# rank's compute and communication threads to one core hurts); the torch ranks are never bound.
# cpu/wall = process CPU time (all threads: compute, MPI/gloo communication threads) / step wall
# time, mean over ranks: well below 1 thread's worth means the ranks waited for a core.
# Raw outputs (traces, JSON) go to --out DIR (default: a temporary directory that is kept);
# --report DIR prints the tables again from such a directory without running anything
# (give the same positional arguments as the run).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="" bind=none torch_timing="" report_only=""
pos=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --bind) bind=${2:?--bind needs none or core}; shift 2 ;;
    --torch-comm-timing) torch_timing=--comm-timing; shift ;;
    --report) report_only=${2:?--report needs the --out directory of an earlier run}; shift 2 ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) pos+=("$1"); shift ;;
  esac
done
set -- "${pos[@]+"${pos[@]}"}"
G=${1:-$here/../../build/release/trainers/gpt/gpt_train}
model=${2:-gpt-tiny} batch=${3:-8} steps=${4:-6} caps=${5:-1,5,25,100} ranks=${6:-2} threads=${7:-1}
[ -n "$report_only" ] || [ -x "$G" ] || { echo "bench_ddp_vs_torch.sh: error: gpt_train not found at '$G'" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "bench_ddp_vs_torch.sh: error: mpirun not on PATH" >&2; exit 1; }
/usr/bin/python3 -c 'import torch, h5py' 2>/dev/null ||
  { echo "bench_ddp_vs_torch.sh: error: /usr/bin/python3 lacks torch or h5py" >&2; exit 1; }
case $bind in none|core) ;; *) echo "bench_ddp_vs_torch.sh: error: --bind none|core" >&2; exit 1 ;; esac
[ -z "$report_only" ] || out=$report_only
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/bench_ddp_vs_torch.XXXXXX")
mkdir -p "$out"
ncaps=$(tr ',' '\n' <<<"$caps" | grep -c .)

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 \
       OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=$threads
t_start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
log() { echo "# [$(( $(date +%s) - t_start ))s, load $(cut -d' ' -f1 /proc/loadavg)] $*" >&2; }

scaleprobe() {  # ranks caps steps-in-summary trace
  log "scaleprobe: $1 rank(s), caps $2 -> $4"
  local n; n=$(tr ',' '\n' <<<"$2" | grep -c .)
  mpirun -np "$1" --bind-to "$bind" -x OMP_NUM_THREADS "$G" -m "$model" -B "$batch" -s $(( n * ($3 + 1) )) \
    -a ring --bucket-cap-mb "$2" --threads "$threads" --val-batches 0 -q -o "$4" > "${4%.h5}.log" 2>&1 ||
    { echo "bench_ddp_vs_torch.sh: error: gpt_train failed, see ${4%.h5}.log" >&2; tail -5 "${4%.h5}.log" >&2; exit 1; }
}
torchddp() {  # ranks caps out.jsonl [extra args]
  log "torch DDP: $1 rank(s), caps $2 -> $3"
  /usr/bin/python3 "$here/bench_ddp_torch.py" --model "$model" --batch "$batch" --steps "$steps" --caps "$2" \
    --ranks "$1" --threads "$threads" --raw "${3%.jsonl}.raw.json" "${@:4}" > "$3" 2> "${3%.jsonl}.log" ||
    { echo "bench_ddp_vs_torch.sh: error: bench_ddp_torch.py failed, see ${3%.jsonl}.log" >&2; tail -5 "${3%.jsonl}.log" >&2; exit 1; }
}

if [ -n "$report_only" ]; then
  load_start=$(cat "$out/load_start" 2>/dev/null || echo '?') load_end=$(cat "$out/load_end" 2>/dev/null || echo '?')
else
for pass in 1 2; do
  scaleprobe "$ranks" "$caps" "$steps" "$out/scaleprobe_pass$pass.h5"
  torchddp "$ranks" "$caps" "$out/torch_pass$pass.jsonl" $torch_timing
done
# 1 rank: the same caps (nothing to reduce, but the same warm-up and step structure)
scaleprobe 1 "$caps" "$steps" "$out/scaleprobe_1rank.h5"
torchddp 1 "$caps" "$out/torch_1rank.jsonl" --no-baseline
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
log "done"
echo "$load_start" > "$out/load_start"; echo "$load_end" > "$out/load_end"
echo $(( $(date +%s) - t_start )) > "$out/seconds"
fi

/usr/bin/python3 - "$out" "$model" "$batch" "$steps" "$caps" "$ranks" "$threads" "$bind" "$load_start" "$load_end" \
    "$(cat "$out/seconds" 2>/dev/null || echo '?')" <<'PY'
import json, math, os, statistics, sys
import h5py
import numpy as np

out, model, batch, steps, caps, ranks, threads, bind, load0, load1, secs = sys.argv[1:]
caps = caps.split(",")
NO_SYNC = "no_sync"
ms = lambda v: "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v * 1e3:.1f}"


def sp_pass(path):
    """Per cap: the cases row and every summarised step's slowest-rank time; per-phase means."""
    with h5py.File(path) as f:
        c, it, seq = f["cases"], f["iterations"], int(f.attrs["seq_len"])
        cols = {k: it[k][:] for k in ("rank", "step", "case", "in_summary", "forward_s", "backward_s", "wait_s",
                                       "optimizer_s", "step_s", "process_cpu_s")}
        res = {}
        for i, label in enumerate(x.decode() for x in c["bucket_cap"][:]):
            keep = (cols["case"] == i) & (cols["in_summary"] == 1)
            slowest = {}
            for s, t in zip(cols["step"][keep], cols["step_s"][keep]):
                slowest[int(s)] = max(slowest.get(int(s), 0.0), float(t))
            res[label] = dict(buckets=int(c["buckets"][i]), it_mean=float(c["iteration_mean_s"][i]),
                              it_median=float(c["iteration_median_s"][i]), compute=float(c["compute_mean_s"][i]),
                              exposed=float(c["exposed_comm_mean_s"][i]),
                              hidden=float(c["hidden_fraction"][i]) if "hidden_fraction" in c else float("nan"),
                              tok=float(c["samples_per_s"][i]) * seq, slowest=list(slowest.values()),
                              cpu_wall=float(cols["process_cpu_s"][keep].mean() / cols["step_s"][keep].mean()),
                              **{p: cols[p + "_s"][keep].tolist() for p in ("forward", "backward", "wait", "optimizer",
                                                                             "step")})
        return res


def torch_pass(path):
    lines = [json.loads(l) for l in open(path) if l.strip()]
    raw = json.load(open(path.replace(".jsonl", ".raw.json")))
    rows = [r for rk in raw["ranks"] for r in rk["rows"] if r["in_summary"]]
    res = {}
    for d in lines:
        rs = [r for r in rows if r["case"] == d["cap"]]
        slowest = {}
        for r in rs:
            slowest[r["step"]] = max(slowest.get(r["step"], 0.0), r["step_s"])
        res[d["cap"]] = dict(buckets=d["buckets"], it_mean=d["iteration_mean_s"], it_median=d["iteration_median_s"],
                             compute=d["compute_est_s"], exposed=d["exposed_comm_est_s"],
                             hidden=None, measured=d.get("exposed_comm_mean_s"),
                             tok=d["tokens_per_s"], slowest=list(slowest.values()),
                             cpu_wall=d["cpu_mean_s"] / d["step_mean_s"],
                             **{p: [r[p + "_s"] for r in rs] for p in ("forward", "backward", "optimizer", "step")})
    base = [r for r in rows if r["case"] == NO_SYNC]
    if base:
        res[NO_SYNC] = {p: [r[p + "_s"] for r in base] for p in ("forward", "backward", "optimizer", "step")}
    return res


sp = [sp_pass(os.path.join(out, f"scaleprobe_pass{p}.h5")) for p in (1, 2)]
tc = [torch_pass(os.path.join(out, f"torch_pass{p}.jsonl")) for p in (1, 2)]
sp1 = sp_pass(os.path.join(out, "scaleprobe_1rank.h5"))
tc1 = torch_pass(os.path.join(out, "torch_1rank.jsonl"))
with h5py.File(os.path.join(out, "scaleprobe_pass1.h5")) as f:
    machine = f.attrs["machine"].decode()
tv = json.loads(open(os.path.join(out, "torch_pass1.jsonl")).readline())["torch"]

print(f"# gpt_train vs torch {tv} DDP (gloo): {model}, batch {batch}/rank, {ranks} rank(s) x {threads} thread(s), "
      f"bind {bind}, {steps} summarised steps per cap and pass, 2 passes (A B A B)")
print(f"# {machine}; load average {load0} at start, {load1} at end; {secs} s in all; raw outputs in {out}")
print("# iteration = slowest rank's step; compute = fwd+bwd+opt; exposed = wait for buckets ('~': torch estimate "
      "step(cap) - step(no_sync))")
hdr = f"{'pass':>4} {'impl':<10} {'cap':>6} {'buckets':>7} {'iter ms':>8} {'median':>8} {'compute':>8} " \
      f"{'exposed':>8} {'hidden':>7} {'tokens/s':>9} {'cpu/wall':>8}"
print(hdr)
for p in (0, 1):
    for cap in caps:
        for name, r in (("scaleprobe", sp[p][cap]), ("torch", tc[p][cap])):
            est = name == "torch" and r.get("measured") is None
            ov = r["hidden"]
            print(f"{p + 1:>4} {name:<10} {cap:>6} {r['buckets']:>7} {ms(r['it_mean']):>8} {ms(r['it_median']):>8} "
                  f"{ms(r['compute']):>8} {('~' if est else '') + ms(r['exposed']):>8} "
                  f"{'-' if ov is None or math.isnan(ov) else f'{ov * 100:+.0f} %':>7} {r['tok']:>9.0f} {r['cpu_wall']:>8.2f}")

print(f"\n# both passes pooled: iteration ms over all {2 * int(steps)} summarised steps per cap (slowest rank)")
print(f"{'cap':>6} {'sp mean':>8} {'sp med':>8} {'torch mean':>10} {'torch med':>9} {'sp/torch mean':>13} "
      f"{'sp/torch med':>12} {'pass1 ratio':>11} {'pass2 ratio':>11}")
pooled = {}
for cap in caps:
    a = sp[0][cap]["slowest"] + sp[1][cap]["slowest"]
    b = tc[0][cap]["slowest"] + tc[1][cap]["slowest"]
    pooled[cap] = (statistics.mean(a), statistics.mean(b))
    r1 = sp[0][cap]["it_mean"] / tc[0][cap]["it_mean"]
    r2 = sp[1][cap]["it_mean"] / tc[1][cap]["it_mean"]
    print(f"{cap:>6} {ms(statistics.mean(a)):>8} {ms(statistics.median(a)):>8} {ms(statistics.mean(b)):>10} "
          f"{ms(statistics.median(b)):>9} {statistics.mean(a) / statistics.mean(b):>13.2f} "
          f"{statistics.median(a) / statistics.median(b):>12.2f} {r1:>11.2f} {r2:>11.2f}")

print("\n# where the time goes, both passes pooled: mean ms per rank and step (torch's backward includes the wait)")
print(f"{'impl':<10} {'cap':>7} {'forward':>8} {'backward':>8} {'wait':>8} {'optimizer':>9} {'step':>8}")
for cap in caps:
    for name, res in (("scaleprobe", sp), ("torch", tc)):
        m = {k: statistics.mean(res[0][cap][k] + res[1][cap][k]) for k in ("forward", "backward", "optimizer", "step")}
        w = ms(statistics.mean(res[0][cap]["wait"] + res[1][cap]["wait"])) if name == "scaleprobe" else "(in bwd)"
        print(f"{name:<10} {cap:>7} {ms(m['forward']):>8} {ms(m['backward']):>8} {w:>8} {ms(m['optimizer']):>9} "
              f"{ms(m['step']):>8}")
if NO_SYNC in tc[0]:
    m = {k: statistics.mean(tc[0][NO_SYNC][k] + tc[1][NO_SYNC][k]) for k in ("forward", "backward", "optimizer", "step")}
    print(f"{'torch':<10} {'no_sync':>7} {ms(m['forward']):>8} {ms(m['backward']):>8} {'-':>8} {ms(m['optimizer']):>9} "
          f"{ms(m['step']):>8}")

best = min(caps, key=lambda c: pooled[c][0])
best_t = min(caps, key=lambda c: pooled[c][1])
print(f"\n# weak scaling ({batch} rows per rank): efficiency = t(1 rank: mean of all its steps) / t({ranks} ranks) at "
      f"each one's best cap (pooled mean); also per pass (that pass's mean at the same cap)")
print(f"{'impl':<10} {'1-rank ms':>9} {'best cap':>8} {ranks + '-rank ms':>9} {'efficiency':>10} {'pass 1':>6} "
      f"{'pass 2':>6} {'tokens/s 1 rank':>15}")
for name, one, res, cap, k in (("scaleprobe", sp1, sp, best, 0), ("torch", tc1, tc, best_t, 1)):
    t1 = statistics.mean([t for c in caps for t in one[c]["slowest"]])
    tok1 = statistics.mean([one[c]["tok"] * one[c]["it_mean"] for c in caps]) / t1  # tokens per step / t1
    print(f"{name:<10} {ms(t1):>9} {cap:>8} {ms(pooled[cap][k]):>9} {t1 / pooled[cap][k]:>10.2f} "
          f"{t1 / res[0][cap]['it_mean']:>6.2f} {t1 / res[1][cap]['it_mean']:>6.2f} {tok1:>15.0f}")
PY
