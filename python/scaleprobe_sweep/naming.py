"""Names of traces, logs and jobs (points: dimensions.point_name).

The job names its own trace (job.py); the submitter must predict that name to resume, and both
use these functions:
  point  <bench>_N<nodes>_t<tasks/node>_c<cpus/task> + the dimensions' parts, in table order:
         [_g<gpus/node>][_weak][_mpirun][_<backend>] (a GPU run, _g<N>, is on NCCL: no _nccl)
  stem   the point, plus _p<k> for pass k >= 2 (pass 1 keeps the name traces always had)
  trace  <stem>_j<job id>.h5, or <stem>_j<array job>_<task>.h5 in an array
"""
from __future__ import annotations

from pathlib import Path


def pass_suffix(pass_no: int) -> str:
    return f"_p{pass_no}" if pass_no > 1 else ""


def stem(point: str, pass_no: int) -> str:
    return point + pass_suffix(pass_no)


def trace_name(point_stem: str, job_tag: str) -> str:
    return f"{point_stem}_j{job_tag}.h5"


def job_tag_of(path: Path, point_stem: str) -> str:
    """The job tag in a trace file name (…_j1234.h5.partial -> "1234", …_j12_3.h5 -> "12_3")."""
    return path.name[len(point_stem) + 2:].split(".", 1)[0]


def array_entry(nodes: int, tpn: int, cpt: int, pass_no: int) -> str:
    """One point of SCALEPROBE_ARRAY_POINTS: NxTxC for pass 1, NxTxCpK for pass K."""
    return f"{nodes}x{tpn}x{cpt}" + (f"p{pass_no}" if pass_no > 1 else "")


def job_name(bench: str, nodes: int, tpn: int, cpt: int, tag: str, pass_no: int) -> str:
    return f"sp-{bench}-N{nodes}t{tpn}c{cpt}{tag}{pass_suffix(pass_no)}"
