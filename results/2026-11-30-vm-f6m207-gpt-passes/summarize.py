"""Summary of measure.sh's runs: per thread count and pass gpt-tiny's tokens/s from the three
builds and PyTorch's, their ratios; per kernel (of any build, at least 1 % of the base step) the
ms per step of each build (medians over the passes); bench_kernels' kernels per call, each build.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import json, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
from base_new import print_kernel_table, print_rates, read_runs  # noqa: E402  (results/lib: shared with other campaigns)

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
builds = ("base", "fused", "new")
runs = read_runs(raw, "gpt", builds)
for t in print_rates(runs):
    print_kernel_table(runs, t)
bench = {}
for b in builds:
    try:
        bench[b] = {r["name"].replace("/real_time", ""): r["real_time"] / 1e6
                    for r in json.load(open(f"{raw}/bench_kernels-{b}.json"))["benchmarks"]}
    except FileNotFoundError:
        pass
if len(bench) == len(builds):
    print("\n## bench_kernels, gpt-tiny shapes, 1 thread: ms per call (— where a build has no such benchmark)\n")
    print("| benchmark | " + " | ".join(builds) + " |\n|---|" + "---|" * len(builds))
    for name in sorted(set().union(*bench.values())):
        print(f"| {name} | " + " | ".join("—" if name not in bench[b] else f"{bench[b][name]:.3f}" for b in builds) + " |")
