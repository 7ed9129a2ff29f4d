"""summary.md from measure.sh's raw/: per model and pass, unsharded DDP, --shard optimizer with the
all-gather after the update and overlapped with the next forward (each trace's own numbers: the
slowest rank's median step, the forward and all-gather phases' and the exposed communication's
means over ranks and summarised steps), the overlapped / after-update ratio of the median step
in the same pass and its median over passes.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import statistics
import sys

from scaleprobe_analysis.stored import ddp_step, variant_runs

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
rows, cpu = variant_runs(raw, ("none", "after", "next"), lambda f: {
    **ddp_step(f, ("forward", "all_gather")),
    "deferred_steps": int(f.attrs["gathers_overlapping_forward"]),
    "buckets": int(f["cases"]["buckets"][0])})
passes = sorted({k[1] for k in rows})
print(f"CPU: {', '.join(sorted(cpu))}; {len(passes)} passes, 2 ranks bound one per core, 1 thread each; "
      "step = the slowest rank's median step over the summarised steps (cases.iteration_median_s); "
      "forward, all-gather: per-step means over ranks and summarised steps\n")
cols = ["step_ms", "forward_ms", "all_gather_ms", "exposed_ms", "deferred_steps", "final_loss"]
for model in dict.fromkeys(k[0] for k in sorted(rows)):
    print(f"## {model} ({rows[(model, passes[0], 'next')]['buckets']} buckets)\n")
    print("| pass | variant | " + " | ".join(cols) + " |")
    print("|---" * (2 + len(cols)) + "|")
    ratio, gather_after, gather_next = [], [], []
    for p in passes:
        for variant in ("none", "after", "next"):
            r = rows[(model, p, variant)]
            print(f"| {p} | {variant} | " + " | ".join(f"{r[c]:.4g}" for c in cols) + " |")
        ratio.append(rows[(model, p, "next")]["step_ms"] / rows[(model, p, "after")]["step_ms"])
        gather_after.append(rows[(model, p, "after")]["all_gather_ms"])
        gather_next.append(rows[(model, p, "next")]["all_gather_ms"])
    print()
    print(f"next-forward / after-update step, per pass: {', '.join(f'{x:.3f}' for x in ratio)}; "
          f"median {statistics.median(ratio):.3f}\n")
    print(f"all-gather ms per step: after-update {min(gather_after):.3f}–{max(gather_after):.3f} "
          f"(median {statistics.median(gather_after):.3f}), next-forward {min(gather_next):.3f}–{max(gather_next):.3f} "
          f"(median {statistics.median(gather_next):.3f})\n")
