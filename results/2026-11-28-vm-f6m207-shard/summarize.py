"""summary.md from measure.sh's raw/: per model and pass, unsharded DDP beside --shard optimizer and gradients
(each trace's own numbers: the slowest rank's median step, the optimizer and all-gather phases'
means over ranks and summarised steps, the most optimizer-state bytes and peak RSS of a rank), and
each sharded / unsharded ratio of the median step in the same pass, with its median over passes.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import glob
import os
import statistics
import sys

import numpy as np

from scaleprobe_analysis.h5open import open_h5  # the one safe open
from scaleprobe_analysis.stored import ddp_step, variant_runs

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"


def numbers(f):
    return {**ddp_step(f, ("optimizer", "all_gather")),
            "state_MiB": int(f.attrs["optimizer_state_bytes"]) / 2**20,
            "grad_resident_MiB": int(f.attrs.get("gradient_resident_bytes", 4 * int(f.attrs["gradient_numel"]))) / 2**20,
            "peak_rss_MiB": int(np.max(f["ranks"]["peak_rss_bytes"][()])) / 2**20,
            "params": int(f.attrs["gradient_numel"])}


rows, cpu = variant_runs(raw, ("none", "optimizer", "gradients"), numbers)
passes = sorted({k[1] for k in rows})
print(f"CPU: {', '.join(sorted(cpu))}; {len(passes)} passes, 2 ranks bound one per core, 1 thread each; "
      "step = the slowest rank's median step over the summarised steps (cases.iteration_median_s)\n")
cols = ["step_ms", "optimizer_ms", "all_gather_ms", "exposed_ms", "state_MiB", "grad_resident_MiB", "peak_rss_MiB",
        "final_loss"]
levels = ("optimizer", "gradients")
for model in dict.fromkeys(k[0] for k in sorted(rows)):
    n = rows[(model, passes[0], "none")]["params"]
    print(f"## {model} ({n} parameters)\n")
    print("| pass | shard | " + " | ".join(cols) + " |")
    print("|---" * (2 + len(cols)) + "|")
    ratios = {level: [] for level in levels}
    for p in passes:
        for shard in ("none", *levels):
            r = rows[(model, p, shard)]
            print(f"| {p} | {shard} | " + " | ".join(f"{r[c]:.4g}" for c in cols) + " |")
        for level in levels:
            ratios[level].append(rows[(model, p, level)]["step_ms"] / rows[(model, p, "none")]["step_ms"])
    print()
    for level in levels:
        print(f"--shard {level} / unsharded step, per pass: {', '.join(f'{x:.3f}' for x in ratios[level])}; "
              f"median {statistics.median(ratios[level]):.3f}\n")
extra = sorted(glob.glob(f"{raw}/noverify-*.h5"))
if extra:
    print("## peak RSS with --verify-steps 0 (one run each)\n")
    print("| run | state_MiB | grad_resident_MiB | peak_rss_MiB (largest rank) |")
    print("|---|---|---|---|")
    for path in extra:
        with open_h5(path) as f:
            resident = int(f.attrs.get("gradient_resident_bytes", 4 * int(f.attrs["gradient_numel"])))
            print(f"| {os.path.basename(path)[:-3]} | {int(f.attrs['optimizer_state_bytes']) / 2**20:.4g} | "
                  f"{resident / 2**20:.4g} | "
                  f"{int(np.max(f['ranks']['peak_rss_bytes'][()])) / 2**20:.4g} |")
