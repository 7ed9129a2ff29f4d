"""Summary of measure.sh's runs: per thread count and pass ResNet-20's images/s with the 3x3
convolutions chosen by SCALEPROBE_CONV=auto and all on the direct kernel, and their ratio; per
kernel the ms per step of each mode (medians over the passes); bench_kernels' convolutions with
every 3x3 shape in oneDNN and none.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import glob, json, re, statistics, sys
from scaleprobe_analysis.h5open import open_h5  # the one safe open
from scaleprobe_analysis.stored import kernel_ms_per_step, kernel_rows, text

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
med = statistics.median
rate, kern, cpu, choice = {}, {}, set(), {}
for path in sorted(glob.glob(f"{raw}/resnet-*.h5")):
    t, c, p = re.search(r"resnet-t(\d)-(auto|direct)-p(\d+)\.h5$", path).groups()
    with open_h5(path) as f:
        cpu.add(text(f["provenance"].attrs["cpu_signature"]))
        choice[c] = text(f["provenance"].attrs["conv_choice"])
        rate[(t, c, p)] = float(f.attrs["images_per_s"])
        for name, ms in kernel_ms_per_step(f).items():
            kern.setdefault((t, c), {}).setdefault(name, []).append(ms)
assert all(choice[c] == c for c in choice), f"a trace ran another convolution choice than its name says: {choice}"
print(f"CPU: {', '.join(sorted(cpu))}\n")
print("| threads | pass | direct images/s | auto images/s | auto / direct |\n|---|---|---|---|---|")
ratios = {}
for (t, c, p) in sorted(k for k in rate if k[1] == "direct"):
    a, b = rate[(t, "direct", p)], rate[(t, "auto", p)]
    ratios.setdefault(t, []).append(b / a)
    print(f"| {t} | {p} | {a:.1f} | {b:.1f} | {b / a:.3f} |")
print("\n| threads | median auto / direct | range |\n|---|---|---|")
for t, r in sorted(ratios.items()):
    print(f"| {t} | {med(r):.3f} | {min(r):.3f}–{max(r):.3f} |")
for t in sorted(ratios):
    a, b = kern[(t, "direct")], kern[(t, "auto")]
    print(f"\n## {t} thread(s): ms per step, medians over the passes (kernels above 1 % of the step)\n")
    print("| kernel | direct | auto | auto / direct |\n|---|---|---|---|")
    for row in kernel_rows(a, b):
        print(row)
bench = {}
for c in ("direct", "onednn"):
    try:
        bench[c] = {b["name"]: b for b in json.load(open(f"{raw}/bench_kernels-{c}.json"))["benchmarks"]}
    except FileNotFoundError:
        pass
if len(bench) == 2:
    print("\n## bench_kernels, 1 thread: every 3x3 convolution on the direct kernel or in oneDNN (ms per call)\n")
    print("| benchmark | direct | oneDNN | oneDNN / direct |\n|---|---|---|---|")
    for name, d in bench["direct"].items():
        o = bench["onednn"].get(name)
        if o is not None:
            print(f"| {name.replace('/real_time', '')} | {d['real_time'] / 1e6:.3f} | {o['real_time'] / 1e6:.3f} | "
                  f"{o['real_time'] / d['real_time']:.3f} |")
