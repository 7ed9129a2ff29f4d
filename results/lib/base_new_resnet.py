"""Shared by the summarize.py of 2026-11-30-vm-f23m1-conv-weight-rows and
2026-11-30-vm-f6m207-resnet-block-end (the runs of base_new_resnet.sh): the traces and the peer's
JSON read back, and the images/s table with its ratios printed."""
import glob, json, re, statistics
from scaleprobe_analysis.h5open import open_h5  # the one safe open
from scaleprobe_analysis.stored import kernel_ms_per_step, text


def read_runs(raw):
    """rate[(threads, who, pass)] images/s, kern[(threads, who)][kernel] ms per step per pass,
    torch[(threads, pass)] the peer's images/s, and the provenance sets cpu, rev[who], choice[who]."""
    runs = {"rate": {}, "kern": {}, "cpu": set(), "rev": {}, "choice": {}, "torch": {}}
    for path in sorted(glob.glob(f"{raw}/resnet-*.h5")):
        t, who, p = re.search(r"resnet-t(\d)-(base|new)-p(\d+)\.h5$", path).groups()
        with open_h5(path) as f:
            runs["cpu"].add(text(f["provenance"].attrs["cpu_signature"]))
            runs["rev"].setdefault(who, set()).add(text(f["provenance"].attrs["git_revision"]))
            runs["choice"].setdefault(who, set()).add(text(f["provenance"].attrs["conv_choice"]))
            runs["rate"][(t, who, p)] = float(f.attrs["images_per_s"])
            for name, ms in kernel_ms_per_step(f).items():
                runs["kern"].setdefault((t, who), {}).setdefault(name, []).append(ms)
    for path in sorted(glob.glob(f"{raw}/torch-t*-p*.json")):
        t, p = re.search(r"torch-t(\d)-p(\d+)\.json$", path).groups()
        runs["torch"][(t, p)] = float(json.load(open(path))["images_per_s"])
    return runs


def print_rates(runs):
    """The provenance line, images/s per thread count and pass with the three ratios, and each
    ratio's median, range and passes at issue 28's 1.2; returns the thread counts."""
    med, rate, torch, rev, choice = statistics.median, runs["rate"], runs["torch"], runs["rev"], runs["choice"]
    print(f"CPU: {', '.join(sorted(runs['cpu']))}; revisions: base {', '.join(sorted(rev['base']))}, "
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
    return sorted(ratios)
