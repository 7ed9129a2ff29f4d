"""``scaleprobe-analyze export``: a campaign's per-case summary tables as CSV or JSON.

For dashboards and harnesses that would otherwise parse the printed tables. One table per trace
kind (the kind module's ``SUMMARY_TABLE``: allreduce and bucket_sweep ``summary``, train
``cases``), every row prefixed with the run it came from (trace, point, pass, grid position,
scaling, launcher, CPU, measured or simulated), plus the campaign status (every expected run
and what became of it). Values are the trace's own, unrounded; NaN becomes empty (CSV) or null
(JSON). Schema: docs/trace-schema.md, "Export".
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from .campaign import trace_stem
from .campaign_status import CampaignScan, relative_path
from .kinds import MODULES
from .style import status_text

SCHEMA = "scaleprobe-export"
VERSION = 1
RUN_COLUMNS = ["trace", "point", "pass", "kind", "program", "nodes", "tasks_per_node", "cpus_per_task", "ranks",
               "scaling", "launcher", "cpu_signature", "data"]


def summary_tables(scan: CampaignScan) -> dict[str, pd.DataFrame]:
    """Per kind: every valid trace's per-case table, each row prefixed with its run's columns."""
    frames: dict[str, list[pd.DataFrame]] = {}
    for point in scan.points:
        module = MODULES.get(point.id.kind)
        if module is None:
            continue
        for trace, pass_label in zip(point.traces, point.passes):
            table = trace.tables.get(module.SUMMARY_TABLE)
            if table is None or table.empty:
                continue
            run = {"trace": trace_stem(scan.root, trace), "point": point.id.name, "pass": pass_label,
                   "kind": point.id.kind, "program": point.id.bench, "nodes": point.id.nodes,
                   "tasks_per_node": point.id.tasks_per_node, "cpus_per_task": point.id.cpus_per_task,
                   "ranks": point.id.ranks, "scaling": point.id.scaling, "launcher": point.id.launcher,
                   "cpu_signature": str(trace.provenance.get("cpu_signature", "")),
                   "data": status_text(trace.simulated)}
            rows = table.copy()
            for col in reversed(RUN_COLUMNS):
                rows.insert(0, col if col not in rows else f"run_{col}", run[col])
            frames.setdefault(point.id.kind, []).append(rows)
    return {kind: pd.concat(parts, ignore_index=True) for kind, parts in sorted(frames.items())}


def status_table(scan: CampaignScan) -> pd.DataFrame:
    return pd.DataFrame([{"point": r.point, "pass": r.pass_no, "status": r.status,
                          "path": relative_path(r.path, scan.root), "reason": r.reason, "attempts": r.attempts}
                         for r in scan.runs], columns=["point", "pass", "status", "path", "reason", "attempts"])


def _plain(value):
    """A JSON-ready Python value: numpy scalars unwrapped, bytes decoded, NaN/inf -> None."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def records(frame: pd.DataFrame) -> list[dict]:
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text(text)
    tmp.replace(path)


def export(scan: CampaignScan, fmt: str, output: Path | None) -> list[Path]:
    """Writes the export; returns the files written ([] when JSON went to stdout)."""
    tables = summary_tables(scan)
    status = status_table(scan)
    if fmt == "json":
        doc = {"schema": SCHEMA, "version": VERSION, "campaign": scan.root.name,
               "tables": {kind: records(frame) for kind, frame in tables.items()}, "runs": records(status)}
        text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
        if output is None:
            print(text, end="")
            return []
        _write(output, text)
        return [output]
    output.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in [*tables.items(), ("runs", status)]:
        path = output / f"{name}.csv"
        _write(path, frame.to_csv(index=False))
        written.append(path)
    return written
