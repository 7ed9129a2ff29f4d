"""Summary of measure.sh's runs: per thread count, sum_of_squares' ms per step and the step's ms
in each build (medians over the passes, every pass listed), and whether the final losses agree.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import glob, re, statistics, sys
from scaleprobe_analysis.h5open import open_h5  # the one safe open
from scaleprobe_analysis.stored import kernel_ms_per_step, text

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
runs, cpu, rev, loss = {}, set(), {}, {}
for path in sorted(glob.glob(f"{raw}/gpt-*.h5")):
    t, who, p = re.search(r"gpt-t(\d)-(base|new)-p(\d+)\.h5$", path).groups()
    with open_h5(path) as f:
        cpu.add(text(f["provenance"].attrs["cpu_signature"]))
        rev.setdefault(who, set()).add(text(f["provenance"].attrs["git_revision"]))
        k = kernel_ms_per_step(f)
        runs[(t, who, int(p))] = (k["sum_of_squares"], k["(step)"])
        loss.setdefault((t, who), set()).add(float(f.attrs["final_loss"]))
print(f"CPU: {', '.join(sorted(cpu))}; revisions: base {', '.join(sorted(rev['base']))}, "
      f"new {', '.join(sorted(rev['new']))}\n")
print("| threads | build | sum_of_squares ms/step (every pass) | median | step ms (every pass) | median | final losses |")
print("|---|---|---|---|---|---|---|")
for t in sorted({k[0] for k in runs}):
    for who in ("base", "new"):
        ps = sorted(p for (tt, w, p) in runs if tt == t and w == who)
        sq = [runs[(t, who, p)][0] for p in ps]
        st = [runs[(t, who, p)][1] for p in ps]
        print(f"| {t} | {who} | {', '.join(f'{v:.3f}' for v in sq)} | {statistics.median(sq):.3f} | "
              f"{', '.join(f'{v:.2f}' for v in st)} | {statistics.median(st):.2f} | "
              f"{', '.join(repr(v) for v in sorted(loss[(t, who)]))} |")
