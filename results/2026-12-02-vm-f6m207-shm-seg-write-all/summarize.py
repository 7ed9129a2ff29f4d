"""Every pass from the stored traces: per placement and size, shm and shm-seg's median call time
(slowest rank) over MPI_Allreduce's in the same run, shm-seg's bus bandwidth over the run's copy
bandwidth (all ranks copying at once), and shm-seg after / before in the same pass; then the
ranges over the passes. From the repository root:
    PYTHONPATH=python /usr/bin/python3 results/2026-12-02-vm-f6m207-shm-seg-write-all/summarize.py RAW
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
from passes import p50_by_case, print_pass_tables, provenance_line, read_passes  # noqa: E402  (results/lib: shared with another campaign)

raw = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "raw"
traces, cpus, revisions = read_passes(raw)
# (side, pass) -> {(placement, bytes, algorithm): p50_us}, copy GB/s
runs = {key: (p50_by_case(t), t.memory_copy_GBps()) for key, t in traces.items()}

print(provenance_line(cpus, revisions))
cases = sorted({(pl, n) for p50, _ in runs.values() for pl, n, _ in p50}, key=lambda c: (c[0] != "out", c[1]))


def ratios(before, after, placement, n):
    (b, copy_b), (a, copy_a) = before, after
    busbw = lambda p50, copy: n / (p50[(placement, n, "shm-seg")] * 1e-6) / 1e9 / copy  # 2 ranks: busbw = algbw
    return {
        "shm / MPI (after)": a[(placement, n, "shm")] / a[(placement, n, "mpi")],
        "shm-seg / MPI before": b[(placement, n, "shm-seg")] / b[(placement, n, "mpi")],
        "shm-seg / MPI after": a[(placement, n, "shm-seg")] / a[(placement, n, "mpi")],
        "after / before": a[(placement, n, "shm-seg")] / b[(placement, n, "shm-seg")],
        "busbw / copy before": busbw(b, copy_b),
        "busbw / copy after": busbw(a, copy_a),
    }


print_pass_tables(runs, cases, ratios, header=["shm / MPI (after)", "shm-seg / MPI before", "shm-seg / MPI after",
                                               "shm-seg after / before", "shm-seg busbw / copy before", "after"])
