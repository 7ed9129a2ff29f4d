"""Every pass from the stored traces: per size, each schedule's median call time (slowest rank) over
MPI_Allreduce's in the same run; then each ratio's median and range over the passes. From the
repository root:
    PYTHONPATH=python /usr/bin/python3 results/2026-12-02-vm-f6m207-doubling/summarize.py RAW
"""
import statistics
import sys
from pathlib import Path

from scaleprobe_analysis.trace import load_trace

raw = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "raw"
SCHEDULES = ("tree", "ring", "rabenseifner", "doubling")
ratios, cpus, revisions = {}, set(), set()
print("| bytes | pass | " + " | ".join(f"{a} / MPI" for a in SCHEDULES) + " |")
print("|---" * (2 + len(SCHEDULES)) + "|")
for path in sorted(raw.glob("p*.h5"), key=lambda p: int(p.stem[1:])):
    t = load_trace(path)
    cpus.add(t.provenance["cpu_signature"])
    revisions.add(t.provenance["git_revision"])
    s = t.table("summary")
    if (s["wrong"] != 0).any():
        sys.exit(f"{path}: a wrong result")
    p50 = {(int(r.bytes), r.algorithm): r.p50_us for r in s.itertuples()}
    for n in sorted({n for n, _ in p50}):
        row = [p50[(n, a)] / p50[(n, "mpi")] for a in SCHEDULES]
        for a, v in zip(SCHEDULES, row):
            ratios.setdefault((n, a), []).append(v)
        print(f"| {n} | {path.stem[1:]} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
print(f"\nCPU: {', '.join(sorted(cpus))}; build {', '.join(sorted(revisions))}\n")
print("| bytes | schedule | median / MPI | range |")
print("|---|---|---|---|")
for (n, a), v in sorted(ratios.items()):
    print(f"| {n} | {a} | {statistics.median(v):.3f} | {min(v):.3f}-{max(v):.3f} |")
