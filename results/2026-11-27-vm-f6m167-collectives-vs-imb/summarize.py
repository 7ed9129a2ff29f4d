"""summary.md from measure.sh's raw/: per collective and size, IMB-MPI1's t_avg, collective_perf's
t_mean for its `mpi` row (the MPI library's call; from its printed table, 2 decimals) and their ratio in every pass, and the median
ratio. Both are the mean over ranks of each rank's mean time per call, in microseconds.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import glob, re, statistics, sys
import os as _os
from scaleprobe_analysis.h5open import open_h5  # the one safe open

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
IMB_NAMES = {"Allgather": "all_gather", "Bcast": "broadcast", "Alltoall": "all_to_all"}
imb, ours, cpu, ranks = {}, {}, set(), set()
for path in glob.glob(f"{raw}/imb-p*.txt"):
    p = int(re.search(r"imb-p(\d+)\.txt$", path).group(1))
    bench = None
    for line in open(path):
        m = re.match(r"# Benchmarking (\w+)", line)
        if m:
            bench = IMB_NAMES.get(m.group(1))
        f = line.split()
        if bench and len(f) == 5 and f[0].isdigit() and int(f[0]) > 0:
            imb[(bench, int(f[0]), p)] = float(f[4])
for path in glob.glob(f"{raw}/*-p*.txt"):  # collective_perf's printed tables (its traces where kept)
    if "imb-" in path:
        continue
    c, p = re.search(r"(\w+)-p(\d+)\.txt$", path).groups()
    for line in open(path):
        f = line.split()
        if len(f) == 17 and f[5] == "mpi":  # size count type op ip algorithm iters t_min t_mean ...
            ours[(c, int(f[1]) * 4, int(p))] = float(f[8])  # f32 elements
    h5 = path[:-4] + ".h5"
    if _os.path.exists(h5):
        with open_h5(h5) as f:
            cpu.add(f["provenance"].attrs["cpu_signature"].decode())
            ranks.add(int(f.attrs["nranks"]))
ranks = ranks or {2}  # measure.sh's mpirun -np 2
(n,) = ranks
passes = sorted({k[2] for k in ours})
print(f"CPU: {', '.join(sorted(cpu)) or 'see README.md'}; {len(passes)} passes, {n} ranks, one node; ratio = collective_perf / IMB\n")
for imb_name, c in IMB_NAMES.items():
    # IMB's #bytes per rank (Allgather) or per rank pair (Alltoall) is 1/n of collective_perf's size.
    scale = n if c in ("all_gather", "all_to_all") else 1
    print(f"## {imb_name} (collective_perf -c {c})\n")
    print("| IMB #bytes | collective_perf size | " + " | ".join(f"IMB p{p} | ours p{p} | ratio p{p}" for p in passes)
          + " | median ratio |")
    print("|---" * (3 + 3 * len(passes)) + "|")
    for b in sorted({k[1] for k in imb if k[0] == c}):
        cells, ratios = [], []
        for p in passes:
            i, o = imb.get((c, b, p)), ours.get((c, b * scale, p))
            if i and o:
                ratios.append(o / i)
                cells.append(f"{i:.2f} | {o:.2f} | {o / i:.2f}")
            else:
                cells.append("- | - | -")
        if ratios:
            print(f"| {b} | {b * scale} | " + " | ".join(cells) + f" | {statistics.median(ratios):.2f} |")
    print()
