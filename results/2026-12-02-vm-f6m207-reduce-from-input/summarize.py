"""Every pass from the stored traces: per collective, schedule and size (out of place), the
schedule's median call time (slowest rank) over the library's in the same run, before and after,
and its after / before in the same pass; then each ratio's median and range over the passes. From
the repository root:
    PYTHONPATH=python /usr/bin/python3 results/2026-12-02-vm-f6m207-reduce-from-input/summarize.py RAW
(RAW: raw, raw-repeat or raw-tree; each schedule and collective its traces hold)
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
from passes import p50_by_case, print_pass_tables, provenance_line, read_passes  # noqa: E402  (results/lib: shared with other campaigns)

raw = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "raw"
for title, suffix, schedules in (("allreduce", "", ("ring", "rabenseifner", "doubling", "tree")),
                                 ("reduce-scatter", "-scatter", ("ring", "halving"))):
    traces, cpus, revisions = read_passes(raw, suffix)
    if not traces:  # raw-tree/ holds allreduce runs only
        continue
    runs = {key: p50_by_case(t) for key, t in traces.items()}
    print(provenance_line(cpus, revisions))
    cases = sorted({(pl, n) for p50 in runs.values() for pl, n, _ in p50}, key=lambda c: (c[0] != "out", c[1]))
    for alg in (a for a in schedules if any(a == k[2] for p50 in runs.values() for k in p50)):
        print(f"\n## {title}: {alg}\n")
        print_pass_tables(runs, cases, lambda b, a, placement, n: {
            f"{alg} / library before": b[(placement, n, alg)] / b[(placement, n, "mpi")],
            f"{alg} / library after": a[(placement, n, alg)] / a[(placement, n, "mpi")],
            f"{alg} after / before": a[(placement, n, alg)] / b[(placement, n, alg)],
        })
