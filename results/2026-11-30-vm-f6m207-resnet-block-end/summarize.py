"""Summary of measure.sh's runs: per thread count and pass ResNet-20's images/s with the base and
the new build and PyTorch's, their ratios; per kernel (of either build, at least 1 % of the
base step) the ms per step of each build (medians over the passes); bench_kernels' batch norm,
ReLU and residual kernels per call in each build.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import glob, json, re, statistics, sys
from scaleprobe_analysis.h5open import open_h5  # the one safe open
from scaleprobe_analysis.stored import kernel_ms_per_step, text

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
med = statistics.median
rate, kern, cpu, rev, choice = {}, {}, set(), {}, {}
for path in sorted(glob.glob(f"{raw}/resnet-*.h5")):
    t, who, p = re.search(r"resnet-t(\d)-(base|new)-p(\d+)\.h5$", path).groups()
    with open_h5(path) as f:
        cpu.add(text(f["provenance"].attrs["cpu_signature"]))
        rev.setdefault(who, set()).add(text(f["provenance"].attrs["git_revision"]))
        choice.setdefault(who, set()).add(text(f["provenance"].attrs["conv_choice"]))
        rate[(t, who, p)] = float(f.attrs["images_per_s"])
        for name, ms in kernel_ms_per_step(f).items():
            kern.setdefault((t, who), {}).setdefault(name, []).append(ms)
torch = {}
for path in sorted(glob.glob(f"{raw}/torch-t*-p*.json")):
    t, p = re.search(r"torch-t(\d)-p(\d+)\.json$", path).groups()
    torch[(t, p)] = float(json.load(open(path))["images_per_s"])
print(f"CPU: {', '.join(sorted(cpu))}; revisions: base {', '.join(sorted(rev['base']))}, "
      f"new {', '.join(sorted(rev['new']))}; conv_choice {sorted(choice['base'] | choice['new'])}\n")
print("| threads | pass | base images/s | new images/s | PyTorch images/s | new / base | base / PyTorch | new / PyTorch |")
print("|---|---|---|---|---|---|---|---|")
ratios = {}
for (t, who, p) in sorted((k for k in rate if k[1] == "new"), key=lambda k: (k[0], int(k[2]))):
    b, n, pt = rate[(t, "base", p)], rate[(t, "new", p)], torch.get((t, p), float("nan"))
    r = ratios.setdefault(t, {"new / base": [], "base / PyTorch": [], "new / PyTorch": []})
    r["new / base"].append(n / b), r["base / PyTorch"].append(b / pt), r["new / PyTorch"].append(n / pt)
    print(f"| {t} | {p} | {b:.1f} | {n:.1f} | {pt:.1f} | {n / b:.3f} | {b / pt:.3f} | {n / pt:.3f} |")
print("\n| threads | ratio | median | range | passes ≥ 1.2 |\n|---|---|---|---|---|")
for t, rs in sorted(ratios.items()):
    for name, r in rs.items():
        print(f"| {t} | {name} | {med(r):.3f} | {min(r):.3f}–{max(r):.3f} | {sum(x >= 1.2 for x in r)} of {len(r)} |")
for t in sorted(ratios):
    print(f"\n## {t} thread(s): ms per step, medians over the passes (kernels above 1 % of the step)\n")
    # Every kernel of either build (the fused kernels have new names: "—" where a build has none).
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
