"""What every campaign folder scripts/bench-peers stores gets, whether measured here (cli.py) or
made of a GPU node's runs (from_node.py): the comparisons' titles, summary.md, the provenance lines
of its README, and the finishing step (renamed into place, its report written).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from . import runs, scaling
from .overlap import overlap_markdown
from .summary import Row, markdown

PROG = "bench-peers"
TITLES = {"allreduce": "Allreduce algorithms vs MPI_Allreduce (same run)",
          "gpt": "gpt_train vs PyTorch (same model, same initial weights, 1 rank)",
          "resnet": "resnet_train vs PyTorch (same model, same initial weights, 1 rank)",
          # Stored campaigns' generated doc sections use this title: rows name each side's transport.
          "ddp": "Data-parallel gpt_train vs PyTorch DDP (gloo), per bucket cap",
          "weak": "Weak scaling efficiency t(1 rank) / t(2 ranks), same cap",
          "strong": "Strong scaling efficiency t(1 rank) / (2 t(2 ranks)), same cap and global batch",
          "gloo": "On Gloo: Gloo's allreduce and the schedules vs MPI_Allreduce (same run); Gloo's allreduce "
                  "timed by allreduce_perf vs PyTorch's",
          "isa": "Portable build (baseline x86-64-v3, kernel variant chosen at run time) vs a native build "
                 "(-march=native), 1 rank",
          **scaling.TITLES}
DERIVED = {"scaling_step", "scaling_efficiency"}  # rows of the scaling runs, not comparisons to choose


def rel(path: Path, root: Path) -> str:
    return os.path.relpath(path, root)


def summary_markdown(rows: list[Row], raw: Path) -> str:
    """summary.md: the peer tables, then the scaling runs' overhead table and the overlap table of
    the data-parallel runs (each only where the campaign has such runs)."""
    extra = [t for t in (scaling.markdown(rows, raw), overlap_markdown(raw)) if t]
    return markdown(rows, TITLES) + "".join("\n" + t for t in extra)


def provenance_lines(root: Path) -> tuple[str, str]:
    """(the first trace's name, its provenance's machine and build lines) for a campaign's README."""
    from scaleprobe_analysis.h5open import open_h5
    trace = next(iter(sorted((root / "raw").glob("*.h5"))))
    with open_h5(trace) as f:
        prov = {k: runs.text(v) for k, v in f["provenance"].attrs.items()}
    keys = ("cpu_model", "cpu_signature", "cpu_isa", "cpu_counts", "cache_topology", "memory_bytes",
            "mpi_library_version", "compiler", "cxx_flags", "git_revision", "hostname")
    return rel(trace, root), "\n".join(f"- `{k}`: {prov.get(k, '?')}" for k in keys)


def finish(work: Path, out: Path) -> int:
    """Renames the complete campaign into place and writes its report, as for any campaign (per
    trace: the data-parallel cases' exposed, reference and hidden communication, breakdowns,
    provenance)."""
    work.rename(out)
    report = subprocess.run([str(runs.REPO / "analysis" / "scaleprobe-analyze"), "report", str(out), "-o",
                             str(out / "report")], capture_output=True, text=True)
    if report.returncode != 0:
        tail = (report.stderr.strip().splitlines() or ["(no output)"])[-1]
        print(f"{PROG}: error: the campaign is stored in {out} but its report failed: {tail}", file=sys.stderr)
        return 1
    print(out / "summary.md")
    return 0
