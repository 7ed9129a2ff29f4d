#!/usr/bin/python3
"""SIMULATED ring and Rabenseifner allreduce (traces/closed-form-n*.h5) against their alpha-beta
closed forms on scripts/simulate's flat platform with one rank per host, where every message
crosses two host links (latency alpha each, bandwidth beta; the backbone never limits):

    ring:          2(p-1) (2 alpha + (n/p)/beta)              (one pipelining chunk: n/p <= 1 MiB)
    rabenseifner:  2 log2(p) 2 alpha + 2 (p-1)/p n / beta     (p a power of two)

alpha and beta are read from each trace's provenance (SCALEPROBE_SIM_LINK_LATENCY, _BANDWIDTH);
the CPU seconds each simulation took from time-n<P>.txt (/usr/bin/time -v).
    PYTHONPATH=../../python /usr/bin/python3 summarize.py > summary.md      (from this folder)
"""
import math
import re
from pathlib import Path

from scaleprobe_analysis.h5open import open_h5  # the one safe open (digest checked)

HERE = Path(__file__).resolve().parent


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def closed_form_us(algorithm, p, n, alpha, beta):
    if algorithm == "ring":
        return 2 * (p - 1) * (2 * alpha + (n / p) / beta) * 1e6
    if algorithm == "rabenseifner":
        return (2 * math.log2(p) * 2 * alpha + 2 * (p - 1) / p * n / beta) * 1e6
    return None


def size(n):
    return f"{n >> 20}M" if n >= 1 << 20 else f"{n >> 10}K"


def cpu_seconds(p):
    log = (HERE / f"time-n{p}.txt").read_text()
    field = lambda name: float(re.search(rf"{name} \(seconds\): ([0-9.]+)", log).group(1))  # noqa: E731
    rss = int(re.search(r"Maximum resident set size \(kbytes\): ([0-9]+)", log).group(1))
    status = int(re.search(r"Exit status: ([0-9]+)", log).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([0-9:.]+)", log).group(1)
    return field("User time"), field("System time"), rss, wall, status


def main():
    print("# SIMULATED allreduce against the alpha-beta closed forms (every time simulated)\n")
    print("Time per call in µs; `p50`: median over the 3 timed calls of the slowest rank's time; `t_mean`: mean over "
          "ranks of each rank's mean (ranks do not start a call together: no barrier between calls).\n")
    print("`first call`: the slowest rank's time in the first timed call (and which rank), from the samples.\n")
    print("| algorithm | ranks | size | closed form (µs) | p50 (µs) | p50 / closed form | t_mean (µs) | t_mean / closed form "
          "| first call (µs) | its rank |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    traces = sorted(HERE.glob("traces/closed-form-n*.h5"), key=lambda p: int(re.search(r"n([0-9]+)", p.name).group(1)))
    for path in traces:
        with open_h5(path) as f:
            p = int(f.attrs["nranks"])
            assert int(f.attrs["simulated"]) == 1
            env = f["provenance/env"].attrs
            alpha, beta = float(text(env["SCALEPROBE_SIM_LINK_LATENCY"])), float(text(env["SCALEPROBE_SIM_LINK_BANDWIDTH"]))
            assert int(text(env["SCALEPROBE_SIM_RANKS_PER_NODE"])) == 1
            s, samples = f["summary"], {k: f["samples"][k][()] for k in ("rank", "case", "iteration", "wall_s")}
            first = {}
            for case in s["case"][()]:
                m = (samples["case"] == case) & (samples["iteration"] == 0)
                k = samples["wall_s"][m].argmax()
                first[int(case)] = (samples["wall_s"][m][k] * 1e6, int(samples["rank"][m][k]))
            rows = zip((text(a) for a in s["algorithm"]), s["bytes"][()], s["p50_us"][()], s["t_mean_us"][()],
                       s["wrong"][()], s["case"][()])
            for algorithm, n, p50, t_mean, wrong, case in sorted(rows, key=lambda r: (r[0], r[1])):
                model = closed_form_us(algorithm, p, int(n), alpha, beta)
                assert wrong == 0, f"{path.name}: {algorithm} {n} not verified"
                print(f"| {algorithm} | {p} | {size(int(n))} | {model:.2f} | {p50:.2f} | {p50 / model:.4f} | "
                      f"{t_mean:.2f} | {t_mean / model:.4f} | {first[int(case)][0]:.2f} | {first[int(case)][1]} |")
    print("\nCPU time of each simulation on this machine (`/usr/bin/time -v`, time-n<P>.txt):\n")
    print("| ranks | user (s) | system (s) | real (h:mm:ss or m:ss) | max RSS (KB) | exit status |")
    print("|---:|---:|---:|---:|---:|---|")
    for p in sorted(int(re.search(r"n([0-9]+)", t.name).group(1)) for t in HERE.glob("time-n*.txt")):
        user, system, rss, wall, status = cpu_seconds(p)
        note = "0" if status == 0 else f"{status}: stopped by hand, no trace"
        print(f"| {p} | {user:.2f} | {system:.2f} | {wall} | {rss} | {note} |")


if __name__ == "__main__":
    main()
