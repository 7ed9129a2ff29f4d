"""The campaign's records: <campaign>/manifest.tsv (one line per point and call: what was
submitted, skipped as complete or skipped as queued, and the report job) and
<campaign>/campaign.json (every call: when, the command line, the resolved campaign).

Nothing is ever half-written: manifest lines are appended whole, one write() each, and
rewrites (campaign.json, a manifest converted from the old format) go to a temporary file in
the same folder that is then renamed over the old one.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set

from .dimensions import DIMENSIONS
from .errors import SweepError

COLUMNS = ("submitted_utc", "benchmark", "nodes", "tasks_per_node", "cpus_per_task", *(d.key for d in DIMENSIONS),
           "pass", "status", "job_id", "trace", "log", "sbatch_command")
# Earlier manifests lack columns added since (a dimension, pass): they are read with those
# columns at their defaults and rewritten in the current format before the first append. The
# bash submitter's had neither pass nor backend (every run was pass 1 on MPI).
LATER_COLUMNS = {**{d.key: str(d.default) for d in DIMENSIONS}, "pass": "1"}
OLD_COLUMNS = ("submitted_utc", "benchmark", "nodes", "tasks_per_node", "cpus_per_task", "gpus_per_node", "scaling",
               "launcher", "status", "job_id", "trace", "log", "sbatch_command")


def _earlier_format(header: tuple) -> bool:
    """COLUMNS without some of LATER_COLUMNS, in the same order."""
    return (header != COLUMNS and set(COLUMNS) - set(header) <= set(LATER_COLUMNS)
            and list(header) == [c for c in COLUMNS if c in header])


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _line(fields: Iterable[str]) -> str:
    return "\t".join(fields) + "\n"


class Manifest:
    """The rows of manifest.tsv (as dicts keyed by COLUMNS) and appending to it. With
    write=False (a dry run) rows are only checked, never stored."""

    def __init__(self, path: Path, write: bool):
        self.path, self.write = path, write
        self.rows: List[Dict[str, str]] = []
        self._old_format = False      # on disk in an earlier format: rewritten before appending
        self._ends_open = False       # on disk without a final newline (a writer died mid-line)
        if path.exists():
            self._read()

    def _read(self) -> None:
        text = self.path.read_text(encoding="utf-8", errors="replace")
        lines = text.split("\n")
        header = tuple(lines[0].split("\t"))
        if _earlier_format(header):
            self._old_format = True
        elif header != COLUMNS:
            raise SweepError(f"{self.path}: not a submit-sweep manifest (its first line is not the column header)")
        self._ends_open = not text.endswith("\n")
        skipped = 0
        for line in lines[1:]:
            if not line:
                continue
            fields = line.split("\t")
            if len(fields) != len(header):
                skipped += 1
                continue
            row = dict(zip(header, fields))
            for column, default in LATER_COLUMNS.items():
                row.setdefault(column, "" if row["benchmark"] == "report" else default)
            self.rows.append(row)
        if skipped:
            print(f"# note: {self.path}: {skipped} malformed line(s) ignored", file=sys.stderr)

    def add(self, **fields: str) -> None:
        row = {c: str(fields.get(c, "")) for c in COLUMNS}
        unknown = set(fields) - set(COLUMNS)
        assert not unknown, unknown
        self.rows.append(row)
        if not self.write:
            return
        if self._old_format:
            # Convert once, whole: a file mixing lines of two formats would be unreadable.
            write_atomic(self.path, _line(COLUMNS) + "".join(_line(r[c] for c in COLUMNS) for r in self.rows[:-1]))
            self._old_format = self._ends_open = False
        text = _line(row[c] for c in COLUMNS)
        if not self.path.exists():
            text = _line(COLUMNS) + text
        elif self._ends_open:
            text = "\n" + text
            self._ends_open = False
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)

    def queued_job(self, point_stem: str, queued: Set[str]) -> Optional[str]:
        """The job id of a submission of this point (and pass) that SLURM still lists."""
        for r in self.rows:
            if (r["status"] == "submitted" and r["job_id"] in queued
                    and Path(r["trace"]).name.startswith(point_stem + "_j")):
                return r["job_id"]
        return None

    def campaign_queued(self, queued: Set[str]) -> List[str]:
        """Every submitted job of the campaign SLURM still lists, array tasks as their array."""
        ids = {r["job_id"].split("_")[0] for r in self.rows if r["status"] == "submitted" and r["job_id"] in queued}
        return sorted(ids, key=int)


class History:
    """campaign.json: a JSON list with one entry per (non-dry) call, oldest first."""

    def __init__(self, path: Path):
        self.path = path
        self.entries: List[dict] = []
        if path.exists():
            try:
                self.entries = json.loads(path.read_text(encoding="utf-8"))
            except ValueError as e:
                raise SweepError(f"{path}: not valid JSON ({e}); move it aside to continue the campaign") from None
            if not isinstance(self.entries, list):
                raise SweepError(f"{path}: expected a JSON list of submissions")

    def append(self, entry: dict) -> None:
        self.entries.append(entry)
        write_atomic(self.path, json.dumps(self.entries, indent=1) + "\n")
