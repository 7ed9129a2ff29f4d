"""Every pass from the stored traces and logs: allreduce_perf on Gloo (each algorithm's median call
time, slowest rank, over MPI_Allreduce's in the same run, before and after, and its after / before in
the same pass), then the trainers' closing line (ms per iteration, exposed communication, the
no-overlap allreduce) and their step over the same side's --no-comm step in the same pass; each
ratio's median and range over the passes. From the repository root:
    PYTHONPATH=python /usr/bin/python3 results/2026-12-02-vm-f25m17-gloo-loop-idle/summarize.py RAW
"""
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
from passes import against_reference, print_pass_tables, read_runs  # noqa: E402  (results/lib: shared with other campaigns)

raw = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "raw"
runs, cases = read_runs(raw)
print("\n## allreduce on Gloo: median call time (µs, slowest rank's p50), median over the passes\n")
print("| bytes | algorithm | before (normal) | after (idle) |")
print("|---|---|---|---|")
for _, n in cases:
    for alg in ("mpi", "gloo", "ring", "rabenseifner"):
        side = {s: statistics.median(r[("out", n, alg)] for (k, _), r in runs.items() if k == s) for s in ("before", "after")}
        print(f"| {n} | {alg} | {side['before']:.2f} | {side['after']:.2f} |")
for alg in ("gloo", "ring", "rabenseifner"):
    print(f"\n## allreduce on Gloo: {alg} (before: SCALEPROBE_GLOO_LOOP=normal, after: idle)\n")
    print_pass_tables(runs, cases, against_reference(alg, "MPI_Allreduce"))

STEP = re.compile(r"([\d.]+) ms/iteration over \d+ steps, compute ([\d.]+) ms(?:, exposed ([\d.]+) ms .* of a ([\d.]+) ms no-overlap)?")


def closing(path: Path) -> dict:
    m = next(STEP.search(line) for line in path.read_text().splitlines() if STEP.search(line))
    return {"step_ms": float(m[1]), "compute_ms": float(m[2]),
            "exposed_ms": float(m[3]) if m[3] else None, "no_overlap_ms": float(m[4]) if m[4] else None}


passes = sorted({int(m[1]) for p in raw.glob("*-gpt.txt") if (m := re.fullmatch(r"\w+-p(\d+)-gpt", p.stem))})
for model in ("gpt", "resnet"):
    print(f"\n## {model}: 2 ranks on Gloo, cap 25 MiB\n")
    print("| pass | side | step ms | compute ms | exposed ms | no-overlap allreduce ms | no-comm step ms | step / no-comm |")
    print("|---|---|---|---|---|---|---|---|")
    ratio = {"before": [], "after": []}
    values = {(side, key): [] for side in ratio for key in ("step_ms", "exposed_ms", "no_overlap_ms")}
    for p in passes:
        for side in ("before", "after"):
            run, base = closing(raw / f"{side}-p{p}-{model}.txt"), closing(raw / f"{side}-p{p}-{model}-nocomm.txt")
            r = run["step_ms"] / base["step_ms"]
            ratio[side].append(r)
            for key in ("step_ms", "exposed_ms", "no_overlap_ms"):
                values[(side, key)].append(run[key])
            print(f"| {p} | {side} | {run['step_ms']} | {run['compute_ms']} | {run['exposed_ms']} | {run['no_overlap_ms']} "
                  f"| {base['step_ms']} | {r:.3f} |")
    print("\n| side | median step ms | median exposed ms | median no-overlap allreduce ms | median step / no-comm | range |")
    print("|---|---|---|---|---|---|")
    for side in ("before", "after"):
        med = {key: statistics.median(values[(side, key)]) for key in ("step_ms", "exposed_ms", "no_overlap_ms")}
        print(f"| {side} | {med['step_ms']:.1f} | {med['exposed_ms']:.2f} | {med['no_overlap_ms']:.2f} "
              f"| {statistics.median(ratio[side]):.3f} | {min(ratio[side]):.3f}-{max(ratio[side]):.3f} |")
