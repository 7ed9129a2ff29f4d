"""measure.log -> summary.md: CPU seconds (user + system) of every run, and global / local per pass.
    /usr/bin/python3 summarize.py measure.log > summary.md"""
import re
import sys

cpu, rows = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"(\S+)-(global|local)-(\d): ([\d.]+) s user, ([\d.]+) s system, ([\d.]+) s real", line)
    if m:
        case, mode, k, user, system, real = m.groups()
        cpu[case, mode, int(k)] = (float(user), float(system), float(user) + float(system), float(real))
        continue
    m = re.match(r"^ +(ring|rabenseifner|mpi) +(\S+) +\d+ +[\d.]+ +([\d.]+) ", line)
    if m:
        rows.setdefault(m.group(1, 2), set()).add(m.group(3))
print("# CPU of each simulation (measure.log; 256 simulated ranks, ResNet-50's gradients)\n")
print("| case | shared malloc | pass | user s | system s | CPU s | real s |")
print("|---|---|---:|---:|---:|---:|---:|")
for (case, mode, k), (u, s, c, r) in sorted(cpu.items()):
    print(f"| {case} | {mode} | {k} | {u:.2f} | {s:.2f} | {c:.2f} | {r:.2f} |")
print("\n## global / local CPU, same case and pass\n")
print("| case | pass | global CPU s | local CPU s | global / local |")
print("|---|---:|---:|---:|---:|")
for case, k in sorted({(c, k) for c, _, k in cpu}):
    g, l = cpu[case, "global", k][2], cpu[case, "local", k][2]
    print(f"| {case} | {k} | {g:.2f} | {l:.2f} | {g / l:.2f} |")
print("\n## simulated p50 per iteration (ms): one value per algorithm and cap over all runs\n")
for (alg, cap), values in sorted(rows.items()):
    print(f"- {alg} cap {cap}: {', '.join(sorted(values))}")
