"""Summary of measure.sh's runs: per thread count and pass ResNet-20's images/s with the base and
the new build and PyTorch's, their ratios; per kernel the ms per step of each build (medians over
the passes); bench_kernels' 3x3 convolutions per call (base and new on the direct kernel, new in
oneDNN).
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import json, statistics, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
from base_new import print_rates, read_runs  # noqa: E402  (results/lib: shared with another campaign)
from scaleprobe_analysis.stored import kernel_rows  # noqa: E402

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
med = statistics.median
runs = read_runs(raw)
kern = runs["kern"]
threads = print_rates(runs)
for t in threads:
    print(f"\n## {t} thread(s): ms per step, medians over the passes (kernels above 1 % of the step)\n")
    print("| kernel | base | new | new / base |\n|---|---|---|---|")
    for row in kernel_rows(kern[(t, "base")], kern[(t, "new")]):
        print(row)
bench = {}
for name in ("base-direct", "new-direct", "new-onednn"):
    try:
        bench[name] = {b["name"].replace("/real_time", ""): b["real_time"] / 1e6
                       for b in json.load(open(f"{raw}/bench_kernels-{name}.json"))["benchmarks"]}
    except FileNotFoundError:
        pass
if len(bench) == 3:
    print("\n## bench_kernels, batch 32, 1 thread: ms per call\n")
    print("| benchmark | base direct | new direct | new oneDNN | new direct / base direct | oneDNN / new direct |")
    print("|---|---|---|---|---|---|")
    for name, b in bench["base-direct"].items():
        n, o = bench["new-direct"].get(name), bench["new-onednn"].get(name)
        if n is not None and o is not None:
            print(f"| {name} | {b:.3f} | {n:.3f} | {o:.3f} | {n / b:.3f} | {o / n:.3f} |")
