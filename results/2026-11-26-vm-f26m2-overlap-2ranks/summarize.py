"""Summary of measure.sh's runs: per model, cap and mode the median step (slowest rank per step,
median over the run's summarised steps: cases.iteration_median_s) in every pass; for progress
mode the issue's two checks per pass: step <= the no-comm step + the same buckets' no-overlap
allreduce (cases.reference_comm_s of that run), and the exposed communication after every rank
was ready (cases.exposed_after_ready_mean_s) <= that allreduce.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw"""
import glob, re, statistics, sys
from scaleprobe_analysis.h5open import open_h5  # the one safe open

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
runs = {}
for path in sorted(glob.glob(f"{raw}/*.h5")):
    m = re.search(r"(gpt|resnet)-(\w+)-p(\d+)\.h5$", path)
    with open_h5(path) as f:
        c = f["cases"]
        for i, cap in enumerate(c["bucket_cap"][()]):
            cap = cap.decode() if isinstance(cap, bytes) else str(cap)
            runs[(m[1], cap, m[2], int(m[3]))] = {k: float(c[k][i]) for k in (
                "iteration_median_s", "compute_mean_s", "exposed_comm_mean_s", "exposed_wait_peers_mean_s",
                "exposed_after_ready_mean_s", "progress_mean_s", "reference_comm_s", "compute_imbalance")}
passes = sorted({k[3] for k in runs})
ms = lambda x: f"{x * 1e3:.1f}"
print("## Median step (ms; slowest rank per step, median over steps) in every pass\n")
print("| model | cap MiB | mode | median of passes | every pass |")
print("|---|---|---|---|---|")
for model in ("gpt", "resnet"):
    for cap in ("1", "5", "25"):
        for mode in ("nocomm", "progress", "none", "gloo"):
            v = [runs[(model, cap, mode, p)]["iteration_median_s"] for p in passes if (model, cap, mode, p) in runs]
            if v:
                print(f"| {model} | {cap} | {mode} | {ms(statistics.median(v))} | {' '.join(ms(x) for x in v)} |")
print("\n## Step / the same pass's no-comm step (the same-load overhead)\n")
print("| model | cap MiB | mode | median of passes | min | max | every pass |")
print("|---|---|---|---|---|---|---|")
for model in ("gpt", "resnet"):
    for cap in ("1", "5", "25"):
        for mode in ("progress", "none", "gloo"):
            r = [runs[(model, cap, mode, p)]["iteration_median_s"] / runs[(model, cap, "nocomm", p)]["iteration_median_s"]
                 for p in passes if (model, cap, mode, p) in runs and (model, cap, "nocomm", p) in runs]
            if r:
                print(f"| {model} | {cap} | {mode} | {statistics.median(r):.3f} | {min(r):.3f} | {max(r):.3f} | "
                      f"{' '.join(f'{x:.3f}' for x in r)} |")
print("\n## Progress mode against the issue's bounds, every pass\n")
print("| model | cap MiB | pass | step | no-comm step | no-overlap allreduce | step <= no-comm + allreduce | "
      "exposed | of it waiting for peers | after all ready | after ready <= allreduce | progress calls | imbalance |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
held = {True: 0, False: 0}
for model in ("gpt", "resnet"):
    for cap in ("1", "5", "25"):
        for p in passes:
            r, b = runs.get((model, cap, "progress", p)), runs.get((model, cap, "nocomm", p))
            if not r or not b:
                continue
            ok1 = r["iteration_median_s"] <= b["iteration_median_s"] + r["reference_comm_s"]
            ok2 = r["exposed_after_ready_mean_s"] <= r["reference_comm_s"]
            held[ok1] += 1
            held[ok2] += 1
            print(f"| {model} | {cap} | {p} | {ms(r['iteration_median_s'])} | {ms(b['iteration_median_s'])} | "
                  f"{ms(r['reference_comm_s'])} | {'yes' if ok1 else 'NO'} | {ms(r['exposed_comm_mean_s'])} | "
                  f"{ms(r['exposed_wait_peers_mean_s'])} | {ms(r['exposed_after_ready_mean_s'])} | "
                  f"{'yes' if ok2 else 'NO'} | {ms(r['progress_mean_s'])} | {r['compute_imbalance'] * 100:.1f} % |")
print(f"\nChecks held: {held[True]}, failed: {held[False]}.")
print("\n## The same checks on the medians over passes, and the in-step no-overlap allreduce\n")
print("none mode's exposed_after_ready is the same buckets' allreduce without overlap inside real steps "
      "(after backward, caches as a step leaves them), beside reference_comm_s (after the last step, repeated).\n")
print("| model | cap MiB | median step | median no-comm step | median reference | step <= no-comm + reference | "
      "median after ready (progress) | median after ready (none) | median reference |")
print("|---|---|---|---|---|---|---|---|---|")
med = lambda model, cap, mode, key: statistics.median(runs[(model, cap, mode, p)][key] for p in passes)
for model in ("gpt", "resnet"):
    for cap in ("1", "5", "25"):
        step, base = med(model, cap, "progress", "iteration_median_s"), med(model, cap, "nocomm", "iteration_median_s")
        ref = med(model, cap, "progress", "reference_comm_s")
        print(f"| {model} | {cap} | {ms(step)} | {ms(base)} | {ms(ref)} | {'yes' if step <= base + ref else 'NO'} | "
              f"{ms(med(model, cap, 'progress', 'exposed_after_ready_mean_s'))} | "
              f"{ms(med(model, cap, 'none', 'exposed_after_ready_mean_s'))} | {ms(ref)} |")
