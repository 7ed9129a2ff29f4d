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
