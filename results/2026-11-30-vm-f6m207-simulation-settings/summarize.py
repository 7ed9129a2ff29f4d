"""measure.log -> summary.md: every run's CPU seconds and simulated ring p50, and what one ring costs
(the -n 2 runs' CPU less the -n 1 runs', the lower of each variant's runs) per variant.
Usage: /usr/bin/python3 summarize.py measure.log > summary.md"""
import re, sys

runs, cur = {}, None
for line in open(sys.argv[1]):
    m = re.match(r"^(\S+): ranks (\d+) iterations (\d+) exit (\d+)", line)
    if m:
        cur = dict(name=m[1], ranks=int(m[2]), iters=int(m[3]), exit=int(m[4]), p50=None)
        runs[cur["name"]] = cur
        continue
    m = re.match(r"^\s+ring\s+all\s+\d+\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", line)
    if m and cur:
        cur["p50"] = m[4]
        continue
    m = re.match(r"^(\S+): ([\d.]+) s user, ([\d.]+) s system, ([\d.]+) s real", line)
    if m and cur and m[1] == cur["name"]:
        cur.update(user=float(m[2]), sys=float(m[3]))

EMPTY_VAR = "ran MPI_Irecv+MPI_Isend+MPI_Waitall (the variable set but empty: see README)"
print("| run | ranks | -n | exit | user s | system s | CPU s | simulated ring p50 (ms) | CPU µs per message | note |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for r in runs.values():
    cpu = r["user"] + r["sys"]
    msgs = r["ranks"] * 2 * (r["ranks"] - 1) * r["iters"]
    note = EMPTY_VAR if "patched-original-calls" in r["name"] else ""
    if r["name"].startswith("r16-"):
        note = "caps 1, 25 and all, results verified (#wrong 0); p50 of cap all; µs/message not meaningful"
    print(f"| {r['name']} | {r['ranks']} | {r['iters']} | {r['exit']} | {r['user']:.2f} | {r['sys']:.2f} | {cpu:.2f} | "
          f"{r['p50'] or '—'} | {1e6 * cpu / msgs:.1f} | {note} |")

# variant, ranks, -n 1 runs, -n 2 runs
G = [("base (repository build)", 256, ["r256-base-1", "r256-base-2"], ["r256-base-n2-1", "r256-base-n2-2"]),
     ("patched binary, original calls", 256, ["r256-unset-original-calls-1", "r256-unset-original-calls-2"],
      ["r256-unset-original-calls-n2-1", "r256-unset-original-calls-n2-2"]),
     ("no backbone", 256, ["r256-no-backbone-1", "r256-no-backbone-2"], ["r256-no-backbone-n2-1", "r256-no-backbone-n2-2"]),
     ("huge pages (2 MiB blocks)", 256, ["r256-hugepage-1", "r256-hugepage-2"], ["r256-hugepage-n2-1", "r256-hugepage-n2-2"]),
     ("-no-privatize", 256, ["r256-no-privatize-1", "r256-no-privatize-2"], ["r256-no-privatize-n2-1", "r256-no-privatize-n2-2"]),
     ("Waitall", 256, ["r256-waitall-1", "r256-waitall-2"], ["r256-waitall-n2-1", "r256-waitall-n2-2"]),
     ("Sendrecv", 256, ["r256-sendrecv-1", "r256-sendrecv-2"], ["r256-sendrecv-n2-1", "r256-sendrecv-n2-2"]),
     ("-no-privatize + Sendrecv", 256, ["r256-no-privatize-sendrecv-1", "r256-no-privatize-sendrecv-2"],
      ["r256-no-privatize-sendrecv-n2-1", "r256-no-privatize-sendrecv-n2-2"]),
     ("base (repository build)", 512, ["r512-base-n1", "r512-base-n1-again"], ["r512-base-n2", "r512-base-n2-again"]),
     ("patched binary, original calls", 512, ["r512-unset-original-calls-n1"], ["r512-unset-original-calls-n2"]),
     ("Waitall (runs named patched-original-calls)", 512, ["r512-patched-original-calls-n1"], ["r512-patched-original-calls-n2"]),
     ("Sendrecv", 512, ["r512-sendrecv-n1", "r512-sendrecv-n1-again"], ["r512-sendrecv-n2", "r512-sendrecv-n2-again"]),
     ("-no-privatize + Sendrecv", 512, ["r512-no-privatize-sendrecv-n1"], ["r512-no-privatize-sendrecv-n2"])]
print()
print("One ring without the start-up: the lowest CPU (user + system) of a variant's -n 2 runs less the lowest of")
print("its -n 1 runs (user alone beside it); the factors are the base's over the variant's.")
print()
print("| variant | ranks | -n 1 CPU s (runs) | -n 2 CPU s (runs) | one ring CPU s | one ring user s | µs per message | factor, one ring | factor, -n 1 run |")
print("|---|---:|---|---|---:|---:|---:|---:|---:|")
base = {}
for label, ranks, one, two in G:
    a = [runs[n] for n in one if n in runs and runs[n]["exit"] == 0]
    b = [runs[n] for n in two if n in runs and runs[n]["exit"] == 0]
    if not a or not b:
        continue
    c1 = min(r["user"] + r["sys"] for r in a); c2 = min(r["user"] + r["sys"] for r in b)
    u1 = min(r["user"] for r in a); u2 = min(r["user"] for r in b)
    ring = c2 - c1
    if label.startswith("base"):
        base[ranks] = (ring, c1)
    rb, c1b = base[ranks]
    fmt = lambda rs: ", ".join(f"{r['user'] + r['sys']:.2f}" for r in rs)
    print(f"| {label} | {ranks} | {fmt(a)} | {fmt(b)} | {ring:.2f} | {u2 - u1:.2f} | {1e6 * ring / (ranks * 2 * (ranks - 1)):.1f} | "
          f"{rb / ring:.2f} | {c1b / c1:.2f} |")
