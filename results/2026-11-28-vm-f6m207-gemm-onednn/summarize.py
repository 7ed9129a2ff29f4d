"""Summary of measure.sh's runs: per model, thread count and pass the throughput with every GEMM in
OpenBLAS and in oneDNN and their ratio; per kernel the ms per step of each library (medians over
the passes) and their ratio.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import glob, re, statistics, sys
from scaleprobe_analysis.h5open import open_h5  # the one safe open

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
med = statistics.median
s = lambda x: x.decode() if isinstance(x, bytes) else str(x)
rate, kern, cpu, core, libs = {}, {}, set(), set(), {}
for path in sorted(glob.glob(f"{raw}/*.h5")):
    m, t, g, p = re.search(r"(gpt|resnet)-t(\d)-(openblas|onednn)-p(\d+)\.h5$", path).groups()
    with open_h5(path) as f:
        cpu.add(s(f["provenance"].attrs["cpu_signature"]))
        core.add(s(f.attrs["blas_core"]))
        libs[g] = s(f["provenance"].attrs["gemm_library"])
        rate[(m, t, g, p)] = float(f.attrs["tokens_per_s" if m == "gpt" else "images_per_s"])
        k = f["kernels"]
        wall = float(k["step_wall_s"][0]) / int(k["steps"][0])
        kern.setdefault((m, t, g), {}).setdefault("(step)", []).append(wall * 1e3)
        for i, name in enumerate(k["kernel"][()]):
            kern[(m, t, g)].setdefault(s(name), []).append(float(k["seconds"][i]) / int(k["steps"][i]) * 1e3)
assert all(libs[g] == g for g in libs), f"a trace ran another GEMM library than its name says: {libs}"
print(f"CPU: {', '.join(sorted(cpu))}; OpenBLAS core: {', '.join(sorted(core))}\n")
print("| model | threads | pass | OpenBLAS /s | oneDNN /s | oneDNN / OpenBLAS |\n|---|---|---|---|---|---|")
ratios = {}
for (m, t, g, p) in sorted(k for k in rate if k[2] == "openblas"):
    a, b = rate[(m, t, "openblas", p)], rate[(m, t, "onednn", p)]
    ratios.setdefault((m, t), []).append(b / a)
    print(f"| {m} | {t} | {p} | {a:.1f} | {b:.1f} | {b / a:.3f} |")
print("\n| model | threads | median oneDNN / OpenBLAS | range |\n|---|---|---|---|")
for (m, t), r in sorted(ratios.items()):
    print(f"| {m} | {t} | {med(r):.3f} | {min(r):.3f}–{max(r):.3f} |")
for (m, t) in sorted(ratios):
    a, b = kern[(m, t, "openblas")], kern[(m, t, "onednn")]
    print(f"\n## {m}, {t} thread(s): ms per step, medians over the passes (kernels above 1 % of the step)\n")
    print("| kernel | OpenBLAS | oneDNN | oneDNN / OpenBLAS |\n|---|---|---|---|")
    step = med(a["(step)"])
    for name in sorted(a, key=lambda n: -med(a[n])):
        if name in b and (med(a[name]) >= 0.01 * step or name == "(step)"):
            print(f"| {name} | {med(a[name]):.2f} | {med(b[name]):.2f} | {med(b[name]) / med(a[name]):.3f} |")
