"""summary.md from measure.sh's raw.tsv: GFLOP/s min-max per shape and library over the passes, and
all shapes called once each (from the median time per shape).   /usr/bin/python3 summarize.py raw.tsv"""
import statistics, sys
import pandas as pd

d = pd.read_csv(sys.argv[1] if len(sys.argv) > 1 else "raw.tsv", sep="\t", comment="#")
libs = list(dict.fromkeys(d["library"]))
shapes = list(dict.fromkeys(d["shape"]))
print(f"GFLOP/s, 1 thread, min-max over {d['pass'].nunique()} passes (raw.tsv); the last row: the shapes' time-weighted total\n")
print("| shape | M x N x K | " + " | ".join(libs) + " |")
print("|---|---|" + "---|" * len(libs))
total = {}
for sh in shapes:
    r = d[d["shape"] == sh]
    m, n, k = (int(r.iloc[0][c]) for c in ("M", "N", "K"))
    cells = []
    for lib in libs:
        g = r[r["library"] == lib]["gflops"]
        cells.append(f"{g.min():.0f}-{g.max():.0f}")
        flops, secs = total.get(lib, (0.0, 0.0))
        total[lib] = (flops + 2.0 * m * n * k, secs + 2.0 * m * n * k / (statistics.median(g) * 1e9))
    print(f"| {sh} | {m}x{n}x{k} | " + " | ".join(cells) + " |")
print("| all ten, one call each | | " + " | ".join(f"{total[l][0] / total[l][1] / 1e9:.0f}" for l in libs) + " |")
