"""Every run's allreduce_perf table (raw/*.log) as one row per algorithm and size, with its time
over MPI_Allreduce's (and, for hier, over ring's) in the same run, then issue 27's 16-rank targets
checked on the median over runs (every run and the worst shown). Writes summary.tsv and targets.md beside this file:
    /usr/bin/python3 results/2026-11-30-gpu-node-f6m207-shm/summarize.py
The traces stayed on the node (17 MB each at 16 ranks); the printed tables are the data (each run's
--json summary lies beside its table in raw/, unread here).
"""
import re
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
ROW = re.compile(r"^\s+(\d+)([KMG]?)\s+\d+\s+\w+\s+\w+\s+\w+\s+([\w-]+)\s+\d+\s+(.*)$")
RUN = re.compile(r"^(?:hier_n(\d+)_)?np(\d+)_p(\d+)$")


def runs():
    for log in sorted((HERE / "raw").glob("*.log")):
        m = RUN.match(log.stem)
        if not m:
            continue
        nodes, ranks, pass_no = m.group(1) or "1", int(m.group(2)), int(m.group(3))
        rows = {}
        for line in log.read_text().splitlines():
            r = ROW.match(line)
            if r:
                t_min, t_mean, t_max, p50, p99, algbw, busbw, cpu, vs_mpi, wrong = r.group(4).split()
                rows[(r.group(3), int(r.group(1)) * UNITS[r.group(2)])] = dict(
                    t_mean=float(t_mean), p50=float(p50), busbw=float(busbw), wrong=int(wrong))
        yield log.stem, int(nodes), ranks, pass_no, rows


def main():
    out = ["run\tnodes\tranks\tpass\talgorithm\tbytes\tt_mean_us\tp50_us\tbusbw_GBps\tvs_mpi\tp50_vs_mpi\tvs_ring\twrong"]
    ratios = {}  # (target key) -> [(run, ratio)]
    for run, nodes, ranks, pass_no, rows in runs():
        for (alg, size), r in rows.items():
            mpi, ring = rows.get(("mpi", size)), rows.get(("ring", size))
            vs_mpi = r["t_mean"] / mpi["t_mean"]
            vs_ring = r["t_mean"] / ring["t_mean"] if ring else float("nan")
            out.append(f"{run}\t{nodes}\t{ranks}\t{pass_no}\t{alg}\t{size}\t{r['t_mean']:.4g}\t{r['p50']:.4g}"
                       f"\t{r['busbw']:.3g}\t{vs_mpi:.3f}\t{r['p50'] / mpi['p50']:.3f}\t{vs_ring:.3f}\t{r['wrong']}")
            if r["wrong"]:
                raise SystemExit(f"{run}: {alg} at {size} B has {r['wrong']} wrong elements")
            if ranks == 16:
                key = (alg if alg != "hier" else f"hier {nodes} nodes", size)
                ratios.setdefault(key, []).append((run, vs_ring if alg == "hier" else vs_mpi))
    (HERE / "summary.tsv").write_text("\n".join(out) + "\n")

    targets = [  # (algorithm, sizes, bound, what): issue 27's 16-rank rows
        ("shm-seg", lambda b: b >= 16 << 20, 0.35, "in-segment ≤ 0.35× MPI_Allreduce at ≥ 16 MiB"),
        ("shm-seg", lambda b: 64 << 10 <= b <= 1 << 20, 0.5, "in-segment ≤ 0.5× MPI_Allreduce at 64 KiB–1 MiB"),
        ("shm", lambda b: b >= 16 << 20, 0.6, "private buffers ≤ 0.6× MPI_Allreduce at ≥ 16 MiB"),
        ("hier 2 nodes", lambda b: b >= 1 << 20, 0.7, "hier, 2 nodes by node key, ≤ 0.7× ring at ≥ 1 MiB"),
        ("hier 4 nodes", lambda b: b >= 1 << 20, 0.7, "hier, 4 nodes by node key, ≤ 0.7× ring at ≥ 1 MiB"),
    ]
    md = ["| target (16 ranks) | size | runs | ratio, every run | median | worst | median met |", "|---|---|---|---|---|---|---|"]
    for alg, sizes, bound, what in targets:
        for (a, size), got in sorted(ratios.items(), key=lambda kv: kv[0][1]):
            if a != alg or not sizes(size):
                continue
            worst = max(x for _, x in got)
            median = statistics.median(x for _, x in got)
            every = ", ".join(f"{x:.2f}" for _, x in got)
            md.append(f"| {what} | {size >> 10} KiB | {len(got)} | {every} | {median:.3f} | {worst:.2f} |"
                      f" {'yes' if median <= bound else 'NO'} |")
    (HERE / "targets.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
