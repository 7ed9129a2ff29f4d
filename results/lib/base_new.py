"""Shared by the summarize.py of the campaigns run with base_new.sh (results/lib/README.md names
them): the traces and the peer's JSON read back, and the rate table with its ratios printed.
Builds are named in the raw files (MODEL-tT-NAME-pP.h5); the first of `builds` is the base."""
import glob, json, re, statistics
from scaleprobe_analysis.h5open import open_h5  # the one safe open
from scaleprobe_analysis.stored import kernel_ms_per_step, text

# Per model: the trace's and the peer's rate attribute, its unit, the peer's file prefix, and
# issue 28's target ratio against PyTorch.
MODELS = {"resnet": ("images_per_s", "images/s", "torch", 1.2), "gpt": ("tokens_per_s", "tokens/s", "torch-gpt", 1.5)}


def read_runs(raw, model="resnet", builds=("base", "new")):
    """rate[(threads, build, pass)] per second, kern[(threads, build)][kernel] ms per step per pass,
    torch[(threads, pass)] the peer's rate, and the provenance sets cpu, rev[build], choice[build]
    (ResNet's conv_choice, gpt's gemm_library)."""
    attr, _, prefix, _ = MODELS[model]
    choice_attr = "conv_choice" if model == "resnet" else "gemm_library"
    runs = {"model": model, "builds": list(builds), "rate": {}, "kern": {}, "cpu": set(), "rev": {}, "choice": {},
            "torch": {}}
    for path in sorted(glob.glob(f"{raw}/{model}-*.h5")):
        t, who, p = re.search(rf"{model}-t(\d)-(\w+)-p(\d+)\.h5$", path).groups()
        if who not in builds:
            continue
        with open_h5(path) as f:
            runs["cpu"].add(text(f["provenance"].attrs["cpu_signature"]))
            runs["rev"].setdefault(who, set()).add(text(f["provenance"].attrs["git_revision"]))
            runs["choice"].setdefault(who, set()).add(text(f["provenance"].attrs[choice_attr]))
            runs["rate"][(t, who, p)] = float(f.attrs[attr])
            for name, ms in kernel_ms_per_step(f).items():
                runs["kern"].setdefault((t, who), {}).setdefault(name, []).append(ms)
    for path in sorted(glob.glob(f"{raw}/{prefix}-t*-p*.json")):
        t, p = re.search(r"-t(\d)-p(\d+)\.json$", path).groups()
        runs["torch"][(t, p)] = float(json.load(open(path))[attr])
    return runs


def print_rates(runs):
    """The provenance line, the rates per thread count and pass with every build over the base and
    over PyTorch, and each ratio's median, range and passes at issue 28's target; returns the
    thread counts."""
    med, rate, torch, rev, choice = statistics.median, runs["rate"], runs["torch"], runs["rev"], runs["choice"]
    builds, (_, unit, _, target) = runs["builds"], MODELS[runs["model"]]
    base, others = builds[0], builds[1:]
    revisions = ", ".join(f"{b} {', '.join(sorted(rev[b]))}" for b in builds)
    choice_name = "conv_choice" if runs["model"] == "resnet" else "gemm_library"
    print(f"CPU: {', '.join(sorted(runs['cpu']))}; revisions: {revisions}; "
          f"{choice_name} {sorted(set().union(*(choice[b] for b in builds)))}\n")
    names = [f"{b} / {base}" for b in others] + [f"{b} / PyTorch" for b in builds]
    print("| threads | pass | " + " | ".join(f"{b} {unit}" for b in builds) + f" | PyTorch {unit} | "
          + " | ".join(names) + " |")
    print("|---|---|" + "---|" * (len(builds) + 1 + len(names)))
    ratios = {}
    last = builds[-1]
    for (t, _, p) in sorted((k for k in rate if k[1] == last), key=lambda k: (k[0], int(k[2]))):
        v = {b: rate[(t, b, p)] for b in builds}
        pt = torch.get((t, p), float("nan"))
        values = [v[b] / v[base] for b in others] + [v[b] / pt for b in builds]
        r = ratios.setdefault(t, {n: [] for n in names})
        for n, x in zip(names, values):
            r[n].append(x)
        print(f"| {t} | {p} | " + " | ".join(f"{v[b]:.1f}" for b in builds) + f" | {pt:.1f} | "
              + " | ".join(f"{x:.3f}" for x in values) + " |")
    print(f"\n| threads | ratio | median | range | passes ≥ {target} |\n|---|---|---|---|---|")
    for t, rs in sorted(ratios.items()):
        for name, r in rs.items():
            print(f"| {t} | {name} | {med(r):.3f} | {min(r):.3f}–{max(r):.3f} | {sum(x >= target for x in r)} of {len(r)} |")
    return sorted(ratios)


def print_kernel_table(runs, t):
    """Thread count t's ms per step of every kernel of any build (at least 1 % of the base's step),
    medians over the passes, one column per build and the last build over the first."""
    med, builds = statistics.median, runs["builds"]
    print(f"\n## {t} thread(s): ms per step, medians over the passes (kernels above 1 % of the step)\n")
    ks = {b: runs["kern"][(t, b)] for b in builds}
    step = med(ks[builds[0]]["(step)"])
    print("| kernel | " + " | ".join(builds) + f" | {builds[-1]} / {builds[0]} |\n|---|" + "---|" * (len(builds) + 1))
    # Every kernel of any build (fused kernels have new names: "—" where a build has none).
    names = sorted(set().union(*ks.values()), key=lambda n: -max(med(k.get(n, [0])) for k in ks.values()))
    for name in names:
        v = [med(ks[b][name]) if name in ks[b] else None for b in builds]
        if max(x or 0 for x in v) < 0.01 * step and name != "(step)":
            continue
        ratio = f"{v[-1] / v[0]:.3f}" if v[0] and v[-1] else "—"
        print(f"| {name} | " + " | ".join("—" if x is None else f"{x:.2f}" for x in v) + f" | {ratio} |")
