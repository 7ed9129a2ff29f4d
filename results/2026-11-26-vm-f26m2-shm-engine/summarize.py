"""Summary of measure.sh's runs: per model, cap and pass, ring's and shm's cases of the same run —
the exposed wait after backward (cases.exposed_comm_mean_s), its part after every rank had finished
backward (exposed_after_ready_mean_s: the communication; the rest is waiting for the slowest
peer's backward), the buckets' allreduce without overlap (reference_comm_s) and the median step —
and shm's over ring's for each.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import glob, re, statistics, sys
from scaleprobe_analysis.h5open import open_h5  # the one safe open

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
keys = ("exposed_comm_mean_s", "exposed_after_ready_mean_s", "reference_comm_s", "iteration_median_s")
runs, cpu = {}, set()
for path in sorted(glob.glob(f"{raw}/*.h5")):
    m = re.search(r"(gpt|resnet)-p(\d+)\.h5$", path)
    with open_h5(path) as f:
        sig = f["provenance"].attrs["cpu_signature"]
        cpu.add(sig.decode() if isinstance(sig, bytes) else str(sig))
        c = f["cases"]
        for i, (alg, cap) in enumerate(zip(c["algorithm"][()], c["bucket_cap"][()])):
            alg = alg.decode() if isinstance(alg, bytes) else str(alg)
            cap = cap.decode() if isinstance(cap, bytes) else str(cap)
            runs[(m[1], cap, alg, int(m[2]))] = {k: float(c[k][i]) for k in keys}
passes = sorted({k[3] for k in runs})
ms = lambda x: f"{x * 1e3:.2f}"
print(f"CPU: {', '.join(sorted(cpu))}; passes: {len(passes)}\n")
print("| model | cap MiB | pass | ring exposed | shm exposed | ring after ready | shm after ready | shm/ring after ready "
      "| ring no-overlap allreduce | shm no-overlap allreduce | shm/ring | ring step | shm step |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
ratios = {}
for model in ("gpt", "resnet"):
    for cap in ("1", "25"):
        for p in passes:
            r, s = runs.get((model, cap, "ring", p)), runs.get((model, cap, "shm", p))
            if not r or not s:
                continue
            after = s["exposed_after_ready_mean_s"] / r["exposed_after_ready_mean_s"]
            ref = s["reference_comm_s"] / r["reference_comm_s"]
            ratios.setdefault((model, cap), []).append((after, ref))
            print(f"| {model} | {cap} | {p} | {ms(r['exposed_comm_mean_s'])} | {ms(s['exposed_comm_mean_s'])} | "
                  f"{ms(r['exposed_after_ready_mean_s'])} | {ms(s['exposed_after_ready_mean_s'])} | {after:.2f} | "
                  f"{ms(r['reference_comm_s'])} | {ms(s['reference_comm_s'])} | {ref:.2f} | "
                  f"{ms(r['iteration_median_s'])} | {ms(s['iteration_median_s'])} |")
print("\n| model | cap MiB | shm/ring exposed after ready: median, min-max | shm/ring no-overlap allreduce: median, min-max |")
print("|---|---|---|---|")
for (model, cap), v in ratios.items():
    a, b = [x[0] for x in v], [x[1] for x in v]
    print(f"| {model} | {cap} | {statistics.median(a):.2f}, {min(a):.2f}-{max(a):.2f} | "
          f"{statistics.median(b):.2f}, {min(b):.2f}-{max(b):.2f} |")
