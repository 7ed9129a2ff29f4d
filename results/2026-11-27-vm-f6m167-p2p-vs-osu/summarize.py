"""summary.md from measure.sh's raw/: per test and size, OSU's figure, p2p_perf's and their ratio
in every pass (p2p_perf / OSU: latency in us, bandwidth in MB/s of 1e6 bytes), the median ratio,
and IMB PingPong's latency beside them.
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import glob, re, statistics, sys
from scaleprobe_analysis.h5open import open_h5  # the one safe open

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
osu, ours, imb, cpu = {}, {}, {}, set()
for path in glob.glob(f"{raw}/osu-*-p*.txt"):
    t, p = re.search(r"osu-(\w+)-p(\d+)\.txt$", path).groups()
    for line in open(path):
        f = line.split()
        if len(f) == 2 and not line.startswith("#"):
            osu[(t, int(f[0]), int(p))] = float(f[1])
for path in glob.glob(f"{raw}/p2p-*-p*.h5"):
    t, p = re.search(r"p2p-(\w+)-p(\d+)\.h5$", path).groups()
    with open_h5(path) as f:
        cpu.add(f["provenance"].attrs["cpu_signature"].decode())
        s = f["summary"]
        for b, lat, bw in zip(s["bytes"][()], s["latency_us"][()], s["bandwidth_GBps"][()]):
            ours[(t, int(b), int(p))] = float(lat) if t == "latency" else float(bw) * 1e3  # MB/s
for path in glob.glob(f"{raw}/imb-pingpong-p*.txt"):
    p = int(re.search(r"p(\d+)\.txt$", path).group(1))
    for line in open(path):
        f = line.split()
        if len(f) == 4 and f[0].isdigit():
            imb[(int(f[0]), p)] = float(f[2])
passes = sorted({k[2] for k in ours})
print(f"CPU: {', '.join(sorted(cpu))}; {len(passes)} passes, 2 ranks, one node\n")
for t, unit in (("latency", "us (one way)"), ("bw", "MB/s"), ("bibw", "MB/s")):
    print(f"## {t}, {unit}; ratio = p2p_perf / OSU\n")
    head = "| size | " + " | ".join(f"OSU p{p} | ours p{p} | ratio p{p}" for p in passes) + " | median ratio |"
    if t == "latency":
        head += " IMB PingPong (median) |"
    print(head)
    print("|---" * (2 + 3 * len(passes) + (t == "latency")) + "|")
    for b in sorted({k[1] for k in ours if k[0] == t}):
        cells, ratios = [], []
        for p in passes:
            o, u = osu.get((t, b, p)), ours.get((t, b, p))
            r = u / o if o and u else float("nan")
            ratios.append(r)
            cells.append(f"{o:.2f} | {u:.2f} | {r:.2f}" if o and u else "- | - | -")
        row = f"| {b} | " + " | ".join(cells) + f" | {statistics.median(ratios):.2f} |"
        if t == "latency":
            row += f" {statistics.median([imb[(b, p)] for p in passes if (b, p) in imb]):.2f} |"
        print(row)
    print()
