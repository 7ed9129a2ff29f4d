"""The campaign's tables: every pass of every comparison (summary.tsv) and, per case, the median
and range of the passes' ratios (summary.md).

``speedup`` is always "how much better scaleprobe is" (above 1: scaleprobe better): the peer's time
÷ scaleprobe's time for time metrics, scaleprobe's efficiency ÷ the peer's for efficiencies. It is
computed per pass from that pass's own two measurements (both sides ran back to back), then
summarised over passes: median, min and max. No pass is dropped.
"""
from __future__ import annotations

import csv
import statistics
from dataclasses import asdict, dataclass, fields
from pathlib import Path

HIGHER_IS_BETTER = {"efficiency"}


@dataclass
class Row:
    comparison: str   # allreduce, gloo, gpt, resnet, ddp, weak, strong
    case: str         # e.g. "ring 1M", "1 thread", "cap 25"
    pass_no: int
    ours: str         # what scaleprobe ran
    peer: str         # what it was compared with
    metric: str       # time_us, step_ms, iteration_ms, efficiency
    ours_value: float
    peer_value: float
    first: str        # which side ran first in this pass: ours or peer (same run: both)
    ours_file: str    # raw file the number was read from (relative to the campaign folder)
    peer_file: str

    @property
    def speedup(self) -> float:
        if self.metric in HIGHER_IS_BETTER:
            return self.ours_value / self.peer_value
        return self.peer_value / self.ours_value


COLUMNS = [f.name for f in fields(Row)] + ["speedup"]


def write_tsv(rows: list[Row], path: Path) -> None:
    tmp = path.with_suffix(".tsv.partial")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([*asdict(r).values(), f"{r.speedup:.6g}"])
    tmp.replace(path)


def read_tsv(path: Path) -> list[Row]:
    with open(path, newline="") as f:
        out = []
        for d in csv.DictReader(f, delimiter="\t"):
            d.pop("speedup")
            out.append(Row(**{**d, "pass_no": int(d["pass_no"]), "ours_value": float(d["ours_value"]),
                              "peer_value": float(d["peer_value"])}))
        return out


def cases(rows: list[Row]) -> list[dict]:
    """Per (comparison, case) in first-appearance order: the passes' values and speedups summarised."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.comparison, r.case), []).append(r)
    out = []
    for (comparison, case), rs in groups.items():
        rs = sorted(rs, key=lambda r: r.pass_no)
        sp = [r.speedup for r in rs]
        out.append({"comparison": comparison, "case": case, "ours": rs[0].ours, "peer": rs[0].peer,
                    "metric": rs[0].metric, "passes": len(rs),
                    "ours_median": statistics.median(r.ours_value for r in rs),
                    "peer_median": statistics.median(r.peer_value for r in rs),
                    "speedup_median": statistics.median(sp), "speedup_min": min(sp), "speedup_max": max(sp),
                    "speedups": sp})
    return out


def value(v: float, metric: str) -> str:
    return f"{v:.3f}" if metric == "efficiency" else f"{v:.4g}"


def markdown(rows: list[Row], titles: dict[str, str]) -> str:
    """summary.md: one table per comparison, one line per case: medians, every pass's speedup, range."""
    lines = ["# Peer comparisons", "",
             "`speedup` above 1: scaleprobe is better (peer time ÷ scaleprobe time; for efficiencies scaleprobe's ÷ "
             "the peer's), computed per pass from that pass's two back-to-back measurements; medians and min–max "
             "over **every** pass. Raw numbers: `summary.tsv`; raw outputs: `raw/`.", ""]
    by_comparison: dict[str, list[dict]] = {}
    for c in cases(rows):
        by_comparison.setdefault(c["comparison"], []).append(c)
    for comparison, cs in by_comparison.items():
        metric = cs[0]["metric"]
        lines += [f"## {titles.get(comparison, comparison)}", "",
                  f"| case | scaleprobe | peer | scaleprobe {metric} (median) | peer {metric} (median) | "
                  "speedup median | min–max | every pass |", "|---|---|---|---|---|---|---|---|"]
        for c in cs:
            lines.append(f"| {c['case']} | {c['ours']} | {c['peer']} | {value(c['ours_median'], metric)} | "
                         f"{value(c['peer_median'], metric)} | {c['speedup_median']:.2f} | "
                         f"{c['speedup_min']:.2f}–{c['speedup_max']:.2f} | "
                         f"{', '.join(f'{s:.2f}' for s in c['speedups'])} |")
        lines.append("")
    return "\n".join(lines)
