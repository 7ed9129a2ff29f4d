"""Every pass from the stored traces: per placement and size, the algorithm's (shm, or the one
named second) median call time (slowest rank) over MPI_Allreduce's in the same run, before and
after, and its after / before in the same pass; then the median and range of each ratio over the
passes. From the repository root:
    PYTHONPATH=python /usr/bin/python3 results/2026-12-02-vm-f6m207-shm-own-slice/summarize.py RAW [ALGORITHM]
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
from passes import p50_by_case, print_pass_tables, provenance_line, read_passes  # noqa: E402  (results/lib: shared with other campaigns)

raw = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "raw"
alg = sys.argv[2] if len(sys.argv) > 2 else "shm"
traces, cpus, revisions = read_passes(raw)
runs = {key: p50_by_case(t) for key, t in traces.items()}  # (side, pass) -> {(placement, bytes, algorithm): p50_us}

print(provenance_line(cpus, revisions))
cases = sorted({(pl, n) for p50 in runs.values() for pl, n, _ in p50}, key=lambda c: (c[0] != "out", c[1]))
print_pass_tables(runs, cases, lambda b, a, placement, n: {
    f"{alg} / MPI before": b[(placement, n, alg)] / b[(placement, n, "mpi")],
    f"{alg} / MPI after": a[(placement, n, alg)] / a[(placement, n, "mpi")],
    f"{alg} after / before": a[(placement, n, alg)] / b[(placement, n, alg)],
})
