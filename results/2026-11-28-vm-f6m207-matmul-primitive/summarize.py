"""measure.log -> summary.md: per shape the matmul primitive's GFLOP/s over dnnl_sgemm's, every pass.
    /usr/bin/python3 summarize.py measure.log > summary.md"""
import collections
import re
import sys

ratios, mode = collections.defaultdict(list), None
for line in open(sys.argv[1]):
    if m := re.match(r"## pass \d+: (\w+)", line):
        mode = m.group(1)
    elif m := re.match(r"(\w\w) M=\s*(\d+) N=\s*(\d+) K=\s*(\d+) beta=(\S+)\s+sgemm\s+(\S+)\s+matmul\s+(\S+)", line):
        shape = (m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), m.group(5))
        ratios[shape, mode].append(float(m.group(7)) / float(m.group(6)))
print("GFLOP/s of oneDNN's matmul primitive over dnnl_sgemm's, same shape, same run (measure.log), every pass.\n")
print("| shape | beta | hot: matmul / sgemm | cold: matmul / sgemm |\n|---|---|---|---|")
for shape in sorted({s for s, _ in ratios}):
    hot, cold = (", ".join(f"{x:.2f}" for x in ratios[shape, m]) for m in ("hot", "cold"))
    print(f"| {shape[0]} M={shape[1]} N={shape[2]} K={shape[3]} | {shape[4]} | {hot} | {cold} |")
