"""summary.md from measure.sh's raw/: per collective, algorithm and size, t_mean / the MPI library's
t_mean in the same run (the printed table's vs_mpi) in every pass, and the median over passes.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import glob, re, statistics, sys
from scaleprobe_analysis.h5open import open_h5  # the one safe open

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
ratio, t_mean, cpu = {}, {}, set()
for path in sorted(glob.glob(f"{raw}/*-p*.txt")):
    c, p = re.search(r"(\w+)-p(\d+)\.txt$", path).groups()
    for line in open(path):
        f = line.split()
        if len(f) == 17 and not line.startswith("#"):  # size count type op ip algorithm iters t_min t_mean ... vs_mpi #wrong
            assert f[16] == "0", f"{path}: wrong elements"
            key = (c, f[5], int(f[1]) * 4)  # f32 elements -> bytes
            ratio.setdefault(key, {})[int(p)] = float(f[15])
            t_mean.setdefault(key, {})[int(p)] = float(f[8])
for h5 in glob.glob(f"{raw}/*.h5"):
    with open_h5(h5) as f:
        cpu.add(f["provenance"].attrs["cpu_signature"].decode())
passes = sorted({p for v in ratio.values() for p in v})
print(f"CPU: {', '.join(sorted(cpu))}; {len(passes)} passes, 2 ranks, one node; ratio = t_mean / t_mean of the MPI "
      "library's call in the same run (below 1: faster than MPI)\n")
for c in dict.fromkeys(k[0] for k in sorted(ratio)):
    print(f"## {c}\n")
    print("| algorithm | bytes | MPI t_mean (us), median | " + " | ".join(f"ratio p{p}" for p in passes) + " | median ratio |")
    print("|---" * (4 + len(passes)) + "|")
    for (cc, a, b) in sorted(k for k in ratio if k[0] == c and k[1] != "mpi"):
        r = ratio[(cc, a, b)]
        mpi = statistics.median(t_mean[(cc, "mpi", b)].values())
        print(f"| {a} | {b} | {mpi:.2f} | " + " | ".join(f"{r[p]:.2f}" for p in passes) + f" | {statistics.median(r.values()):.2f} |")
    print()
