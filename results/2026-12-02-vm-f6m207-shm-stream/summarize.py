"""Every pass from the stored traces: per placement and size, the algorithm's (shm, or the one
named second) median call time (slowest rank) over MPI_Allreduce's in the same run, before and
after, and its after / before in the same pass; then the median and range of each ratio over the
passes. From the repository root:
    PYTHONPATH=python /usr/bin/python3 results/2026-12-02-vm-f6m207-shm-stream/summarize.py RAW [ALGORITHM]
"""
import statistics
import sys
from pathlib import Path

from scaleprobe_analysis.trace import load_trace

raw = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "raw"
alg = sys.argv[2] if len(sys.argv) > 2 else "shm"
runs = {}  # (side, pass) -> {(placement, bytes, algorithm): p50_us}
cpus, revisions = set(), {}
for path in sorted(raw.glob("*.h5")):
    side, p = path.stem.split("-p")
    t = load_trace(path)
    cpus.add(t.provenance["cpu_signature"])
    revisions.setdefault(side, set()).add(t.provenance["git_revision"])
    s = t.table("summary")
    if (s["wrong"] != 0).any():
        sys.exit(f"{path}: a wrong result")
    runs[(side, int(p))] = {(r.placement, int(r.bytes), r.algorithm): r.p50_us for r in s.itertuples()}

print(f"CPU: {', '.join(sorted(cpus))}; before {', '.join(sorted(revisions['before']))}, "
      f"after {', '.join(sorted(revisions['after']))}\n")
print(f"| placement | bytes | pass | {alg} / MPI before | {alg} / MPI after | {alg} after / before |")
print("|---|---|---|---|---|---|")
ranges = {}
passes = sorted({p for _, p in runs})
cases = sorted({(pl, n) for p50 in runs.values() for pl, n, _ in p50}, key=lambda c: (c[0] != "out", c[1]))
for placement, n in cases:
    for p in passes:
        b, a = runs[("before", p)], runs[("after", p)]
        row = {
            f"{alg} / MPI before": b[(placement, n, alg)] / b[(placement, n, "mpi")],
            f"{alg} / MPI after": a[(placement, n, alg)] / a[(placement, n, "mpi")],
            f"{alg} after / before": a[(placement, n, alg)] / b[(placement, n, alg)],
        }
        for k, v in row.items():
            ranges.setdefault((placement, n, k), []).append(v)
        print(f"| {placement} | {n} | {p} | " + " | ".join(f"{v:.3f}" for v in row.values()) + " |")

print("\n| placement | bytes | ratio | median | range |")
print("|---|---|---|---|---|")
for (placement, n, k), v in ranges.items():
    print(f"| {placement} | {n} | {k} | {statistics.median(v):.3f} | {min(v):.3f}-{max(v):.3f} |")
