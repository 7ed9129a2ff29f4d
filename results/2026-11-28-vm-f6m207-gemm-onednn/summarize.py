"""Summary of measure.sh's runs: per model, thread count and pass the throughput with every GEMM in
OpenBLAS and in oneDNN and their ratio; per kernel the ms per step of each library (medians over
the passes) and their ratio.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import glob, re, statistics, sys
from scaleprobe_analysis.h5open import open_h5  # the one safe open
from scaleprobe_analysis.stored import kernel_ms_per_step, kernel_rows, text

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
med = statistics.median
rate, kern, cpu, core, libs = {}, {}, set(), set(), {}
for path in sorted(glob.glob(f"{raw}/*.h5")):
    m, t, g, p = re.search(r"(gpt|resnet)-t(\d)-(openblas|onednn)-p(\d+)\.h5$", path).groups()
    with open_h5(path) as f:
        cpu.add(text(f["provenance"].attrs["cpu_signature"]))
        core.add(text(f.attrs["blas_core"]))
        libs[g] = text(f["provenance"].attrs["gemm_library"])
        rate[(m, t, g, p)] = float(f.attrs["tokens_per_s" if m == "gpt" else "images_per_s"])
        for name, ms in kernel_ms_per_step(f).items():
            kern.setdefault((m, t, g), {}).setdefault(name, []).append(ms)
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
    for row in kernel_rows(a, b):
        print(row)
