"""MFU per pass from measure.sh's raw.tsv and the trainer logs in raw/: summary.md on stdout.

Model FLOPs per token = 6 N + 12 L C T (N parameters, L layers, C channels, T context: the usual
estimate, attention's two matmuls included), read from each log; the probe of a pass is, per
library, the mean of its two medians bracketing the trainer, and the best library's value.
    /usr/bin/python3 summarize.py raw.tsv > summary.md
"""
import re
import sys
from collections import defaultdict
from pathlib import Path

tsv = Path(sys.argv[1] if len(sys.argv) > 1 else "raw.tsv")
lines = tsv.read_text().splitlines()
probes = defaultdict(list)  # (pass, library) -> medians
step_ms = {}
for line in lines:
    if line.startswith("#") or line.startswith("pass\t"):
        continue
    p, what, lib, _n, median, *_ = line.split("\t")
    if what == "probe":
        probes[(int(p), lib)].append(float(median))
    else:
        step_ms[int(p)] = float(median)

print(f"Machine and times: `{lines[0][2:]}` … `{lines[-1][2:]}`\n")
print("| pass | gpt_train step ms | model GFLOP/s | " + " | ".join(sorted({l for _, l in probes})) +
      " | probe (best) GFLOP/s | MFU | model / OpenBLAS |")
print("|---|---|---|" + "---|" * len({l for _, l in probes}) + "---|---|---|")
mfus = []
for p in sorted(step_ms):
    log = (tsv.parent / "raw" / f"gpt-p{p}.log").read_text()
    m = re.search(r"V (\d+) T (\d+) C (\d+) L (\d+) NH (\d+)\), (\d+) parameters", log)
    T, C, L, N = int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(6))
    tokens = int(re.search(r"= (\d+) tokens/step", log).group(1))
    model_gflops = (6 * N + 12 * L * C * T) * tokens / (step_ms[p] / 1e3) * 1e-9
    libs = sorted(l for q, l in probes if q == p)
    per_lib = {l: sum(probes[(p, l)]) / len(probes[(p, l)]) for l in libs}
    best = max(per_lib.values())
    mfu = model_gflops / best
    mfus.append(mfu)
    print(f"| {p} | {step_ms[p]:.1f} | {model_gflops:.1f} | " + " | ".join(f"{per_lib[l]:.1f}" for l in libs) +
          f" | {best:.1f} | {100 * mfu:.1f} % | {100 * model_gflops / per_lib['openblas']:.1f} % |")
mfus.sort()
print(f"\nMFU over {len(mfus)} passes: {100 * mfus[0]:.1f}–{100 * mfus[-1]:.1f} %, median "
      f"{100 * mfus[len(mfus) // 2]:.1f} %.")
