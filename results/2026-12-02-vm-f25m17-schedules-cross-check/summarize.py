"""Every pass from the stored traces: per collective, schedule, placement and size, the schedule's
median call time (slowest rank) over the library's in the same run, before and after, and its
after / before in the same pass; then each ratio's median and range over the passes. From the
repository root:
    PYTHONPATH=python /usr/bin/python3 results/2026-12-02-vm-f25m17-schedules-cross-check/summarize.py RAW
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
from passes import against_reference, print_pass_tables, read_runs  # noqa: E402  (results/lib: shared with other campaigns)

raw = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "raw"
for title, suffix, schedules in (("allreduce", "", ("ring", "rabenseifner", "doubling", "tree")),
                                 ("reduce-scatter", "-scatter", ("ring", "halving")),
                                 ("all-gather", "-gather", ("bruck",)),
                                 ("allreduce through shared memory", "-shm", ("shm", "shm-seg"))):
    runs, cases = read_runs(raw, suffix)
    for alg in schedules:
        print(f"\n## {title}: {alg}\n")
        print_pass_tables(runs, cases, against_reference(alg))
