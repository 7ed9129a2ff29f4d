"""measure-old-engine.sh's runs: per model, cap and side the median step (cases.iteration_median_s)
and the exposed wait (cases.exposed_comm_mean_s) in every pass, and step / no-comm step per pass.
   PYTHONPATH=../../python /usr/bin/python3 summarize-old-engine.py raw-old"""
import glob, re, statistics, sys
from scaleprobe_analysis.h5open import open_h5  # the one safe open

raw = sys.argv[1] if len(sys.argv) > 1 else "raw-old"
runs, split = {}, {}
for path in sorted(glob.glob(f"{raw}/*.h5")):
    m = re.search(r"(gpt|resnet)-(\w+)-p(\d+)\.h5$", path)
    with open_h5(path) as f:
        c = f["cases"]
        for i, cap in enumerate(c["bucket_cap"][()]):
            runs[(m[1], cap.decode(), m[2], int(m[3]))] = (float(c["iteration_median_s"][i]),
                                                           float(c["exposed_comm_mean_s"][i]),
                                                           float(c["compute_mean_s"][i]))
            if "exposed_wait_peers_mean_s" in c:  # the new engine's split
                split[(m[1], cap.decode(), m[2], int(m[3]))] = (float(c["exposed_wait_peers_mean_s"][i]),
                                                                float(c["exposed_after_ready_mean_s"][i]),
                                                                float(c["compute_imbalance"][i]))
passes = sorted({k[3] for k in runs})
f1 = lambda x: f"{x:.1f}"
print("| model | cap MiB | side | median step ms (every pass) | step / no-comm step (every pass) | median | "
      "exposed ms (every pass) | compute ms, median of passes |")
print("|---|---|---|---|---|---|---|---|")
for model in ("gpt", "resnet"):
    for cap in ("1", "5", "25"):
        for side in ("nocomm", "old", "new"):
            v = [runs[(model, cap, side, p)] for p in passes]
            base = [runs[(model, cap, "nocomm", p)][0] for p in passes]
            ratio = [s / b for (s, _, _), b in zip(v, base)]
            print(f"| {model} | {cap} | {side} | {f1(statistics.median(s * 1e3 for s, _, _ in v))} "
                  f"({' '.join(f1(s * 1e3) for s, _, _ in v)}) | {' '.join(f'{r:.3f}' for r in ratio)} | "
                  f"{statistics.median(ratio):.3f} | {' '.join(f'{e * 1e3:.2f}' for _, e, _ in v)} | "
                  f"{f1(statistics.median(c * 1e3 for _, _, c in v))} |")

print("\n## The new engine's exposed wait split, and the compute imbalance (%), every pass\n")
print("| model | cap MiB | side | waiting for peers ms | after all ready ms | compute imbalance % |")
print("|---|---|---|---|---|---|")
for model in ("gpt", "resnet"):
    for cap in ("1", "5", "25"):
        for side in ("nocomm", "new"):
            v = [split[(model, cap, side, p)] for p in passes]
            print(f"| {model} | {cap} | {side} | {' '.join(f'{w * 1e3:.1f}' for w, _, _ in v)} | "
                  f"{' '.join(f'{a * 1e3:.1f}' for _, a, _ in v)} | {' '.join(f'{i * 100:.1f}' for _, _, i in v)} |")
