"""The manifest of a campaign made by ``jobs/submit-sweep``: which runs were expected.

``<campaign>/manifest.tsv`` is tab separated with a header; columns submitted_utc, benchmark,
nodes, tasks_per_node, cpus_per_task, gpus_per_node, scaling, launcher, pass, status, job_id,
trace, log, sbatch_command. ``status`` is submitted, queued, complete or report. Older manifests
have no ``pass`` column: every row is pass 1.

A row that expects a trace (status ``submitted``, or ``complete`` for a point a resume found
done) is a :class:`Submission`. The runs a campaign expects are the distinct (point, pass) of
its submissions; a point submitted again after a failure keeps its (point, pass), and the last
submission decides when none of them left a valid trace. ``queued`` rows repeat an earlier
submission and ``report`` rows expect a report, not a trace, so both are left out.

Paths in the manifest are absolute, as the submitter wrote them. A campaign folder that has been
moved or copied since is read where it is now: a recorded path is looked up below the campaign
folder by its longest tail that exists there (see :func:`locate`).
"""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from scaleprobe_sweep import dimensions

MANIFEST_NAME = "manifest.tsv"
REQUIRED = ("benchmark", "nodes", "tasks_per_node", "cpus_per_task", "status", "trace")
EXPECTS_TRACE = ("submitted", "complete")
ERROR_LINE = re.compile(r"\berror:", re.IGNORECASE)
QUOTE_CHARS = 240  # an error line longer than this is cut (a launcher can print a whole environment)


def point_name(row: dict[str, str]) -> str:
    """The name the job gave a manifest row's point (scaleprobe_sweep.dimensions, the one rule):
    allreduce_N2_t1_c1[_g2][_weak][_mpirun][_gloo]; a column an older manifest lacks is at its
    default. :class:`ManifestError` names a value no dimension allows."""
    try:
        values = dimensions.from_texts(row)
    except dimensions.BadValue as exc:
        raise ManifestError(f"{exc} (one of the columns {', '.join(d.key for d in dimensions.DIMENSIONS)})") from exc
    return dimensions.point_name(row["benchmark"], row["nodes"], row["tasks_per_node"], row["cpus_per_task"], values)


@dataclass(frozen=True)
class Submission:
    """One manifest row that expects a trace."""

    point: str  # point_name() of the row
    pass_no: int
    job_id: str
    trace: str  # as recorded
    log: str
    line: int  # line number in the manifest (the header is line 1)


class ManifestError(Exception):
    """A manifest that cannot be read; ``str(e)`` is one line."""


def read_manifest(path: Path) -> list[Submission]:
    """The submissions of ``path`` in file order; :class:`ManifestError` if it is not a manifest."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ManifestError(f"{path}: {exc}") from exc
    if rows and any(c not in rows[0] for c in REQUIRED):
        missing = [c for c in REQUIRED if c not in rows[0]]
        raise ManifestError(f"{path}: no column(s) {', '.join(missing)} (not a submit-sweep manifest?)")
    out = []
    for line, row in enumerate(rows, start=2):
        if None in row or None in row.values():
            continue  # a line with too many or too few fields (a writer that died mid-line)
        if row.get("status") not in EXPECTS_TRACE or row.get("benchmark") == "report" or not row.get("trace"):
            continue
        try:
            pass_no = int(row.get("pass") or 1)
        except ValueError as exc:
            raise ManifestError(f"{path}: line {line}: pass '{row.get('pass')}' is not a number") from exc
        try:
            name = point_name(row)
        except ManifestError as exc:
            raise ManifestError(f"{path}: line {line}: {exc}") from exc
        out.append(Submission(name, pass_no, row.get("job_id", ""), row["trace"], row.get("log", ""), line))
    return out


def locate(root: Path, recorded: str) -> Path:
    """Where a recorded file is now: the recorded path if it lies below ``root``, else the longest tail
    of it that exists below ``root`` (also as ``.failed``/``.partial``), else ``root/<file name>``."""
    path = Path(recorded)
    if not path.is_absolute():
        return root / path
    if path.is_relative_to(root):
        return path
    parts = path.parts[1:]
    for k in range(len(parts), 0, -1):
        candidate = root.joinpath(*parts[-k:])
        if any(Path(f"{candidate}{suffix}").exists() for suffix in ("", ".failed", ".partial", ".partial.failed")):
            return candidate
    return root / path.name


# Lines of the job's wrappers: they say that a run failed, the program's own line says why.
WRAPPER_PREFIXES = ("scaleprobe-job:", "srun:", "slurmstepd")
PROGRAM_ERROR = re.compile(r"^[\w.+-]+: error: ")  # "<program>: error: <one line>", the binaries' convention


def job_error_line(log: Path) -> str | None:
    """The line of a job log that best says why the job failed, or None if no line says ``error:``.

    The program's own first error line (``resnet_train: error: ...``) when there is one; else the
    launcher's first (``srun: error: n3: task 5: Segmentation fault``); else the job script's last.
    """
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    errors = [line.strip() for line in text.splitlines() if ERROR_LINE.search(line)]
    own = [e for e in errors if PROGRAM_ERROR.match(e) and not e.startswith(WRAPPER_PREFIXES)]
    launcher = [e for e in errors if e.startswith(("srun:", "slurmstepd"))]
    found = own[0] if own else launcher[0] if launcher else errors[-1] if errors else None
    if found and len(found) > QUOTE_CHARS:
        found = found[:QUOTE_CHARS] + " …"
    return found
