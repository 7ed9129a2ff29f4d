"""Every pass from the stored traces: per size, Gloo's own allreduce's median call time (slowest
rank) after / before in the same pass, and the ring schedule on Gloo over Gloo's allreduce before
and after; then each ratio's median and range over the passes. From the repository root:
    PYTHONPATH=python /usr/bin/python3 results/2026-12-02-vm-f6m207-gloo-reduce-one-pass/summarize.py [RAW]
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
from passes import print_pass_tables, read_runs  # noqa: E402  (results/lib: shared with other campaigns)

raw = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "raw"
runs, cases = read_runs(raw)
print_pass_tables(runs, cases, lambda b, a, placement, n: {
    "gloo after / before": a[(placement, n, "gloo")] / b[(placement, n, "gloo")],
    "ring / gloo before": b[(placement, n, "ring")] / b[(placement, n, "gloo")],
    "ring / gloo after": a[(placement, n, "ring")] / a[(placement, n, "gloo")],
})
