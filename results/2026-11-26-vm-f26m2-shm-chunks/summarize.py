"""Per pass and message size, from the stored traces: each algorithm's median call time, its ratio
to MPI_Allreduce in the same run, its bus bandwidth and that over the run's memory copy bandwidth
(all ranks copying at once). Writes summary.tsv beside this file:
    PYTHONPATH=python /usr/bin/python3 results/2026-11-26-vm-f26m2-shm-chunks/summarize.py
"""
from pathlib import Path

from scaleprobe_analysis.trace import load_trace

HERE = Path(__file__).resolve().parent

rows = ["source\tchunk\tpass\talgorithm\tbytes\tp50_us\tvs_mpi\tbusbw_GBps\tcopy_GBps\tbusbw_over_copy"]
sources = [(p, p.stem.split("_")[0].removeprefix("chunk"), p.stem.split("_")[1]) for p in sorted((HERE / "raw").glob("*.h5"))]
peers = HERE.parent / "2026-11-26-vm-f26m2-peers-allreduce-256k" / "raw"
sources += [(p, "1M (default)", p.stem.split("_")[1]) for p in sorted(peers.glob("allreduce_p*.h5"))]
for path, chunk, pass_no in sources:
    t = load_trace(path)
    s = t.table("summary")
    copy = t.memory_copy_GBps()
    mpi = {int(r.bytes): r.p50_us for r in s.itertuples() if r.algorithm == "mpi"}
    for r in s.itertuples():
        if not str(r.algorithm).startswith("shm"):
            continue
        busbw = r.bytes / (r.p50_us * 1e-6) / 1e9 * 2 * (t.nranks - 1) / t.nranks
        src = path.relative_to(HERE.parent)
        rows.append(f"{src}\t{chunk}\t{pass_no}\t{r.algorithm}\t{int(r.bytes)}\t{r.p50_us:.4g}\t{r.p50_us / mpi[int(r.bytes)]:.2f}"
                    f"\t{busbw:.2f}\t{copy:.1f}\t{busbw / copy:.2f}")
(HERE / "summary.tsv").write_text("\n".join(rows) + "\n")
print("\n".join(rows))
