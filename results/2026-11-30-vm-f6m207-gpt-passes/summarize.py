"""Summary of measure.sh's runs: per thread count and pass gpt-tiny's tokens/s from the three
builds and PyTorch's, their ratios; per kernel (of any build, at least 1 % of the base step) the
ms per step of each build (medians over the passes); bench_kernels' kernels per call, each build.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import json, statistics, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
from base_new import print_rates, read_runs  # noqa: E402  (results/lib: shared with other campaigns)

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
builds = ("base", "fused", "new")
med = statistics.median
runs = read_runs(raw, "gpt", builds)
kern = runs["kern"]
fmt = lambda v: "—" if v is None else f"{v:.2f}"
for t in print_rates(runs):
    print(f"\n## {t} thread(s): ms per step, medians over the passes (kernels above 1 % of the step)\n")
    ks = {b: kern[(t, b)] for b in builds}
    step = med(ks["base"]["(step)"])
    print("| kernel | " + " | ".join(builds) + " | new / base |\n|---|" + "---|" * (len(builds) + 1))
    names = sorted(set().union(*ks.values()), key=lambda n: -max(med(k.get(n, [0])) for k in ks.values()))
    for name in names:
        v = [med(ks[b][name]) if name in ks[b] else None for b in builds]
        if max(x or 0 for x in v) < 0.01 * step and name != "(step)":
            continue
        ratio = f"{v[-1] / v[0]:.3f}" if v[0] and v[-1] else "—"
        print(f"| {name} | " + " | ".join(fmt(x) for x in v) + f" | {ratio} |")
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
