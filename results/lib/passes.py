"""Shared by the summarize.py of the campaigns measured with before_after.sh (results/lib/README.md
names them): every pass's allreduce_perf trace read back from RAW/SIDE-pP.h5, each verified."""
import re
import statistics
import sys
from pathlib import Path

from scaleprobe_analysis.trace import load_trace


def read_passes(raw: Path, suffix: str = ""):
    """{(side, pass): trace} of RAW/SIDE-pPSUFFIX.h5, the CPUs and {side: revisions}; exits naming a
    trace with a wrong result."""
    traces, cpus, revisions = {}, set(), {}
    for path in sorted(raw.glob("*.h5")):
        name = re.fullmatch(r"(\w+)-p(\d+)" + re.escape(suffix), path.stem)
        if not name:
            continue
        side, p = name.groups()
        t = load_trace(path)
        cpus.add(t.provenance["cpu_signature"])
        revisions.setdefault(side, set()).add(t.provenance["git_revision"])
        if (t.table("summary")["wrong"] != 0).any():
            sys.exit(f"{path}: a wrong result")
        traces[(side, int(p))] = t
    return traces, cpus, revisions


def read_runs(raw: Path, suffix: str = ""):
    """read_passes' traces as {(side, pass): p50_by_case}, with their provenance line printed, and
    their (placement, bytes) cases, out of place first; ({}, []) when RAW holds none of them."""
    traces, cpus, revisions = read_passes(raw, suffix)
    if not traces:
        return {}, []
    runs = {key: p50_by_case(t) for key, t in traces.items()}
    print(provenance_line(cpus, revisions))
    cases = sorted({(pl, n) for p50 in runs.values() for pl, n, _ in p50}, key=lambda c: (c[0] != "out", c[1]))
    return runs, cases


def against_reference(alg: str, name: str = "library", reference: str = "mpi"):
    """The ratios for print_pass_tables of one algorithm of runs read by read_runs: its median time
    over the reference's in the same run, before and after, and its own after / before."""
    return lambda b, a, placement, n: {
        f"{alg} / {name} before": b[(placement, n, alg)] / b[(placement, n, reference)],
        f"{alg} / {name} after": a[(placement, n, alg)] / a[(placement, n, reference)],
        f"{alg} after / before": a[(placement, n, alg)] / b[(placement, n, alg)],
    }


def p50_by_case(trace) -> dict:
    """{(placement, bytes, algorithm): median call time in µs of the slowest rank}."""
    return {(r.placement, int(r.bytes), r.algorithm): r.p50_us for r in trace.table("summary").itertuples()}


def provenance_line(cpus, revisions) -> str:
    return (f"CPU: {', '.join(sorted(cpus))}; before {', '.join(sorted(revisions['before']))}, "
            f"after {', '.join(sorted(revisions['after']))}\n")


def print_pass_tables(runs: dict, cases, ratios, header=None) -> None:
    """For each (placement, bytes) of cases and each pass, the row ratios(before, after, placement,
    bytes) returns — named values, runs[("before"|"after", pass)] being what the caller keeps of a
    pass — as a markdown table (its columns named by header, else by the values' names); then each
    ratio's median and range over the passes."""
    passes = sorted({p for _, p in runs})
    rows = [(placement, n, p, ratios(runs[("before", p)], runs[("after", p)], placement, n))
            for placement, n in cases for p in passes]
    names = header or list(rows[0][3])
    print("| placement | bytes | pass | " + " | ".join(names) + " |")
    print("|---" * (3 + len(names)) + "|")
    ranges = {}
    for placement, n, p, row in rows:
        for k, v in row.items():
            ranges.setdefault((placement, n, k), []).append(v)
        print(f"| {placement} | {n} | {p} | " + " | ".join(f"{v:.3f}" for v in row.values()) + " |")
    print("\n| placement | bytes | ratio | median | range |")
    print("|---|---|---|---|---|")
    for (placement, n, k), v in ranges.items():
        print(f"| {placement} | {n} | {k} | {statistics.median(v):.3f} | {min(v):.3f}-{max(v):.3f} |")
