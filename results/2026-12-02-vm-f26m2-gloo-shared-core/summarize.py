"""Every pass from the stored traces: per model and side, the median step, compute, the exposed
communication split into waiting for peers and after all were ready, the no-overlap allreduce of the
same buckets, the hidden fraction and the step over the same pass's --no-comm step; then, for the
overlapped (thread) runs, how much of the gradients was reduced before backward ended. From here:
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md
"""
import re
import statistics
import sys
from pathlib import Path

import numpy as np

from scaleprobe_analysis.h5open import open_h5  # the one safe open

raw = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "raw"
NAME = re.compile(r"p(\d+)-(thread|none|nocomm)-(gpt|resnet)")
SIDES = ("thread", "none", "nocomm")
MODEL = {"gpt": "gpt-tiny, 8 rows of 128 tokens per rank", "resnet": "ResNet-20, 32 images per rank"}


def read(path: Path) -> dict:
    with open_h5(path) as f:
        c = {k: f["cases"][k][0] for k in f["cases"]}
        out = {"step": c["iteration_median_s"] * 1e3, "compute": c["compute_mean_s"] * 1e3,
               "exposed": c["exposed_comm_mean_s"] * 1e3, "peers": c["exposed_wait_peers_mean_s"] * 1e3,
               "after": c["exposed_after_ready_mean_s"] * 1e3, "reference": c["reference_comm_s"] * 1e3,
               "hidden": c["hidden_fraction"], "overlap": f.attrs.get("overlap_mode", b"?")}
        if "buckets" not in f:
            return out
        it = {k: f["iterations"][k][:] for k in f["iterations"]}
        b = {k: f["buckets"][k][:] for k in f["buckets"]}
    # Each summarised step of each rank: the share of the gradients whose bucket had finished when
    # backward ended, and how long after backward's end the first-ready bucket finished.
    done, late = [], []
    for j in np.flatnonzero(it["in_summary"]):
        r, s = it["rank"][j], it["step"][j]
        bw_end = it["step_start_s"][j] + it["data_s"][j] + it["forward_s"][j] + it["backward_s"][j]
        mine = (b["rank"] == r) & (b["step"] == s)
        numel, end, ready = b["numel"][mine], b["end_s"][mine], b["ready_s"][mine]
        done.append(float(numel[end <= bw_end].sum() / numel.sum()))
        late.append(float((end[np.argmin(ready)] - bw_end) * 1e3))
    out["done_in_backward"] = statistics.median(done)
    out["first_bucket_after_backward_ms"] = statistics.median(late)
    return out


runs = {}
for path in sorted(raw.glob("*.h5")):
    m = NAME.fullmatch(path.stem)
    if m:
        runs[(int(m[1]), m[2], m[3])] = read(path)
passes = sorted({p for p, _, _ in runs})
print("# The engine on Gloo, one core per rank: overlap thread against none (2 ranks)\n")
print(f"{len(passes)} passes; medians over each run's summarised steps (ms); `/ no-comm` = the step over the "
      "same pass's --no-comm step; `in backward` = the share of the gradients whose bucket had finished "
      "when backward ended (median over steps and ranks), `first bucket` = how long after backward's end "
      "the first-ready bucket finished.\n")
for model in ("gpt", "resnet"):
    print(f"## {MODEL[model]}\n")
    print("| pass | side | mode (trace) | step | compute | exposed | waiting for peers | after all were ready "
          "| no-overlap allreduce | hidden | / no-comm | in backward | first bucket |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios = {s: [] for s in SIDES}
    for p in passes:
        base = runs.get((p, "nocomm", model))
        for side in SIDES:
            r = runs.get((p, side, model))
            if r is None:
                continue
            ratio = r["step"] / base["step"] if base else float("nan")
            ratios[side].append(ratio)
            comm = side != "nocomm"

            def cell(key, digits=2, r=r, comm=comm):
                return f"{r[key]:.{digits}f}" if comm and key in r else "-"
            mode = r["overlap"].decode() if isinstance(r["overlap"], bytes) else str(r["overlap"])
            print(f"| {p} | {side} | {mode if comm else '-'} | {r['step']:.2f} | {r['compute']:.2f} | "
                  f"{cell('exposed')} | {cell('peers')} | {cell('after')} | {cell('reference')} | "
                  f"{cell('hidden', 3)} | {ratio:.3f} | {cell('done_in_backward', 3)} | "
                  f"{cell('first_bucket_after_backward_ms')} |")
    print("\nStep / the same pass's no-comm step, median (min–max) over the passes:\n")
    for side in ("thread", "none"):
        v = ratios[side]
        print(f"- {side}: {statistics.median(v):.3f} ({min(v):.3f}–{max(v):.3f}), every pass: "
              + ", ".join(f"{x:.3f}" for x in v))
    tn = [runs[(p, "thread", model)]["step"] / runs[(p, "none", model)]["step"] for p in passes
          if (p, "thread", model) in runs and (p, "none", model) in runs]
    print(f"- thread / none, same pass: {statistics.median(tn):.3f} ({min(tn):.3f}–{max(tn):.3f}), every pass: "
          + ", ".join(f"{x:.3f}" for x in tn) + "\n")
