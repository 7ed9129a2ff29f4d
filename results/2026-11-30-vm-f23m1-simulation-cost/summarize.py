"""Table of measure.sh's runs from measure.log: CPU seconds (user + system) of each simulation,
simulated ring time, and CPU microseconds per simulated message (a ring over p ranks sends
2 (p - 1) messages per rank: one block each step, ResNet-50's 102 MB as one buffer, one segment a
block at these rank counts).
    /usr/bin/python3 summarize.py measure.log > summary.md"""
import re, sys

log = open(sys.argv[1] if len(sys.argv) > 1 else "measure.log").read().splitlines()
print("| run | ranks | user s | system s | CPU s | simulated ring p50 (ms) | CPU µs per message |")
print("|---|---:|---:|---:|---:|---:|---:|")
ring = None
for line in log:
    if re.match(r"^ +ring ", line):
        ring = float(line.split()[7])  # p50(ms)
        continue
    m = re.match(r"^(r(\d+)-[\w-]+): ([\d.]+) s user, ([\d.]+) s system", line)
    if m:
        name, p, user, system = m.group(1), int(m.group(2)), float(m.group(3)), float(m.group(4))
        messages = 2 * (p - 1) * p
        print(f"| {name} | {p} | {user:.2f} | {system:.2f} | {user + system:.2f} | {ring:.3f} | "
              f"{(user + system) / messages * 1e6:.1f} |")
