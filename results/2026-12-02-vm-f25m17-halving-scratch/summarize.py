"""Every pass from the stored traces: the halving and ring reduce-scatter's median call time
(slowest rank) over MPI_Reduce_scatter_block's in the same run, before and after, and their after /
before in the same pass; then each ratio's median and range. From the repository root:
    PYTHONPATH=python /usr/bin/python3 results/2026-12-02-vm-f25m17-halving-scratch/summarize.py RAW
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
from passes import against_reference, print_pass_tables, read_runs  # noqa: E402  (results/lib: shared with other campaigns)

raw = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "raw"
runs, cases = read_runs(raw)
for alg in ("halving", "ring"):
    print(f"\n## reduce-scatter: {alg}\n")
    print_pass_tables(runs, cases, against_reference(alg, "MPI_Reduce_scatter_block"))
