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
from passes import against_reference, print_pass_tables, read_runs  # noqa: E402  (results/lib: shared with other campaigns)

raw = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "raw"
for title, suffix, schedules in (("allreduce", "", ("ring", "rabenseifner", "doubling", "tree")),
                                 ("reduce-scatter", "-scatter", ("ring", "halving"))):
    runs, cases = read_runs(raw, suffix)  # raw-tree/ holds allreduce runs only
    for alg in (a for a in schedules if any(a == k[2] for p50 in runs.values() for k in p50)):
        print(f"\n## {title}: {alg}\n")
        print_pass_tables(runs, cases, against_reference(alg))
