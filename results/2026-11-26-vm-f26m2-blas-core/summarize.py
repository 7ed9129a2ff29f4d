#!/usr/bin/python3
"""Summarise measure.sh's passes: per side, every pass's ms/iteration (the trainer's closing line:
mean step over the 11 summarised steps) and the median of the trace's step times, the median over
passes, and the ratio to the fastest core forced by hand.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py DIR > DIR/summary.md   (from this folder; also
    writes DIR/summary.tsv)"""
import re
import statistics
import sys
from pathlib import Path

from scaleprobe_analysis.h5open import open_h5  # the one safe open

SIDES = ["rule", "detected", "Haswell", "Zen", "SkylakeX", "Cooperlake", "Prescott"]
FORCED = ["Haswell", "Zen", "SkylakeX", "Cooperlake"]


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def one_run(log: Path):
    m = re.search(r"([0-9.]+) ms/iteration", log.read_text())
    with open_h5(log.with_suffix(".h5")) as f:
        steps = f["steps"]
        walls = [w for w, s in zip(steps["step_wall_s"][()], steps["in_summary"][()]) if s]
        core, reason = text(f.attrs["blas_core"]), text(f.attrs["blas_core_reason"])
    return float(m.group(1)), 1e3 * statistics.median(walls), core, reason


def main(root: Path):
    raw = root / "raw"
    runs = {}
    for log in sorted(raw.glob("p*_*.log")):
        p, side = log.stem.split("_", 1)
        runs.setdefault(side, {})[int(p[1:])] = one_run(log)
    med = {s: statistics.median(v[0] for v in runs[s].values()) for s in SIDES if s in runs}
    best_forced = min((s for s in FORCED if s in med), key=med.get)
    tsv = ["side\tcore\tpass\tms_per_iteration\tmedian_step_ms\treason"]
    out = ["| side | core in use | ms/iteration, every pass | median | min-max | median step (trace) | vs best forced |",
           "|---|---|---|---|---|---|---|"]
    for s in SIDES:
        if s not in runs:
            continue
        passes = [runs[s][p] for p in sorted(runs[s])]
        cores = {r[2] for r in passes}
        for p in sorted(runs[s]):
            ms, step, core, reason = runs[s][p]
            tsv.append(f"{s}\t{core}\t{p}\t{ms:.1f}\t{step:.1f}\t{reason}")
        vals = [r[0] for r in passes]
        out.append(f"| {s} | {', '.join(sorted(cores))} | {' '.join(f'{v:.1f}' for v in vals)} | "
                   f"{med[s]:.1f} | {min(vals):.1f}-{max(vals):.1f} | "
                   f"{statistics.median(r[1] for r in passes):.1f} | {med[s] / med[best_forced]:.3f} |")
    reasons = sorted({r[3] for s in ("rule", "detected") if s in runs for r in runs[s].values()})
    (root / "summary.tsv").write_text("\n".join(tsv) + "\n")
    print(f"Best core forced by hand: **{best_forced}** ({med[best_forced]:.1f} ms/iteration, median of "
          f"{len(runs[best_forced])} passes).\n")
    print("\n".join(out))
    print("\nReasons recorded by the rule and detected sides:\n")
    print("\n".join(f"- `{r}`" for r in reasons))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
