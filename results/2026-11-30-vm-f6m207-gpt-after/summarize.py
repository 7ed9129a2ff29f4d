"""Summary of measure.sh's runs: per thread count and pass gpt-tiny's tokens/s from the two builds
and PyTorch's, their ratios; per kernel (of either build, at least 1 % of the base step) the ms
per step of each build (medians over the passes).
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import statistics, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
from base_new import print_rates, read_runs  # noqa: E402  (results/lib: shared with other campaigns)

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
med = statistics.median
runs = read_runs(raw, "gpt")
kern = runs["kern"]
for t in print_rates(runs):
    print(f"\n## {t} thread(s): ms per step, medians over the passes (kernels above 1 % of the step)\n")
    base_k, new_k = kern[(t, "base")], kern[(t, "new")]
    step = med(base_k["(step)"])
    print("| kernel | base | new | new / base |\n|---|---|---|---|")
    names = sorted(set(base_k) | set(new_k), key=lambda n: -max(med(base_k.get(n, [0])), med(new_k.get(n, [0]))))
    for name in names:
        b, n = (med(k[name]) if name in k else None for k in (base_k, new_k))
        if max(b or 0, n or 0) < 0.01 * step and name != "(step)":
            continue
        ratio = f"{n / b:.3f}" if b and n else "—"
        print(f"| {name} | {'—' if b is None else f'{b:.2f}'} | {'—' if n is None else f'{n:.2f}'} | {ratio} |")
