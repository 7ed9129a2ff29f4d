"""Summary of measure.sh's runs: per thread count and pass ResNet-20's images/s with the base and
the new build and PyTorch's, their ratios; per kernel (of either build, at least 1 % of the
base step) the ms per step of each build (medians over the passes); bench_kernels' batch norm,
ReLU and residual kernels per call in each build.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import json, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
from base_new import print_kernel_table, print_rates, read_runs  # noqa: E402  (results/lib: shared with another campaign)

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
runs = read_runs(raw)
for t in print_rates(runs):
    print_kernel_table(runs, t)
bench = {}
for name in ("base", "new"):
    try:
        bench[name] = {b["name"].replace("/real_time", ""): b["real_time"] / 1e6
                       for b in json.load(open(f"{raw}/bench_kernels-{name}.json"))["benchmarks"]}
    except FileNotFoundError:
        pass
if len(bench) == 2:
    print("\n## bench_kernels, batch 32, 1 thread: ms per call (fused:0 is the kernels one after the other)\n")
    print("| benchmark | base | new | new / base |\n|---|---|---|---|")
    for name in sorted(set(bench["base"]) | set(bench["new"])):
        b, n = bench["base"].get(name), bench["new"].get(name)
        fmt = lambda v: "—" if v is None else f"{v:.3f}"
        ratio = f"{n / b:.3f}" if b and n else "—"
        print(f"| {name} | {fmt(b)} | {fmt(n)} | {ratio} |")
