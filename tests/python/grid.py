"""A sweep campaign made by the real binaries, laid out the way jobs/submit-sweep lays one out.

Without SLURM, "nodes" come from MPMD launches giving each context its own SLURMD_NODENAME
(``mpirun -np 1 env SLURMD_NODENAME=n1 BIN : -np 1 env SLURMD_NODENAME=n2 BIN``), which the
binaries record in the ``ranks`` table's ``node`` column. Binaries built before that column
existed record only ``host``; then only the one-node points are made (``Grid.multi_node`` False).

Contents of the campaign folder (``launcher`` mpirun, so point names end in ``_mpirun``):

- allreduce, valid: 1×1, 1×2 with three passes (``SCALEPROBE_PASS`` 1..3), and with the node
  column 2×1 and 2×2 (4 ranks, 2 per node);
- bucket_sweep, valid: 1×1 and 1×2;
- in the manifest but without a valid trace: N4 failed (its trace moved to ``*.failed``, its job
  log ending in an ``error:`` line), N8 missing (no file at all), N1 c2 incomplete (only
  ``*.h5.partial``), N2 c2 unreadable (a truncated ``.h5``);
- ``checkpoints/`` with a real ``gpt_train --save`` checkpoint (HDF5, not a trace) and
  ``logs/`` with job logs: counted, never read.
"""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import h5py

from helpers import TINY_LAYOUT, mpi_env, run_mpi

ALLREDUCE_ARGS = ["--sizes", "8,1K,16K", "-a", "mpi,ring", "-n", "6", "--no-membw", "-q"]
BUCKET_ARGS = ["-c", "tensor,1,all", "-a", "ring", "-n", "3", "-q"]
PASSES = 3  # of the 1×2 allreduce point
MANIFEST_COLUMNS = ("submitted_utc", "benchmark", "nodes", "tasks_per_node", "cpus_per_task", "gpus_per_node",
                    "scaling", "launcher", "pass", "status", "job_id", "trace", "log", "sbatch_command")
FAILED_LOG = ("scaleprobe-job: allreduce job 107 on n[1-4]\n"
              "srun: error: n3: task 2: Exited with exit code 1\n"
              "scaleprobe-job: error: allreduce exited with 1 (trace, if any, moved to *.failed)\n")


@dataclass
class Grid:
    root: Path
    multi_node: bool  # the binaries record the `node` column: 2×1 and 2×2 points exist
    weak: Path | None  # the binaries take --scaling: a weak allreduce sweep (1×1, 1×2) in this folder
    passes: list[Path] = field(default_factory=list)  # the 1×2 allreduce point's traces, pass order
    manifest_rows: list[dict] = field(default_factory=list)


def _mpmd(exe: Path, args: list[str], nodes: list[int], trace: Path, **env: str) -> list[str]:
    """mpirun with one context per node: ``nodes[k]`` ranks with SLURMD_NODENAME=n<k+1>."""
    cmd = ["mpirun", "--oversubscribe"]
    for k, ranks in enumerate(nodes):
        settings = [f"{key}={value}" for key, value in {"SLURMD_NODENAME": f"n{k + 1}", **env}.items()]
        cmd += [":"] if k else []
        cmd += ["-np", str(ranks), "env", *settings, str(exe), *args, "-o", str(trace)]
    return cmd


def _row(bench: str, n: int, t: int, c: int, pass_no: int, job: str, trace: Path, log: Path) -> dict:
    return {"submitted_utc": "2026-11-23T10:00:00Z", "benchmark": bench, "nodes": str(n), "tasks_per_node": str(t),
            "cpus_per_task": str(c), "gpus_per_node": "0", "scaling": "strong", "launcher": "mpirun",
            "pass": str(pass_no), "status": "submitted", "job_id": job, "trace": str(trace), "log": str(log),
            "sbatch_command": f"sbatch --nodes={n} jobs/{bench}.sbatch"}


def write_manifest(path: Path, rows: list[dict], columns=MANIFEST_COLUMNS) -> None:
    lines = ["\t".join(columns)] + ["\t".join(r.get(c, "") for c in columns) for r in rows]
    path.write_text("\n".join(lines) + "\n")


def _node_column(trace: Path) -> bool:
    with h5py.File(trace) as f:
        return "node" in f["ranks"]


def build(root: Path, bins: Path, gpt_train: Path, scratch: Path) -> Grid:
    """Make the campaign in ``root`` (module docstring); ``scratch`` holds the layout file and the weak sweep."""
    allreduce, bucket = bins / "allreduce_perf", bins / "bucket_sweep"
    (root / "logs").mkdir(parents=True)
    env = {"OMP_NUM_THREADS": "1", "SCALEPROBE_LAUNCHER": "mpirun"}
    grid = Grid(root, multi_node=False, weak=None)

    def run(bench, exe, args, nodes, tpn, pass_no, job):
        n = len(nodes)
        stem = f"{bench}_N{n}_t{tpn}_c1_mpirun" + (f"_p{pass_no}" if pass_no > 1 else "")
        trace, log = root / f"{stem}_j{job}.h5", root / "logs" / f"{stem}_j{job}.out"
        run_mpi(_mpmd(exe, args, nodes, trace, SCALEPROBE_PASS=str(pass_no), **env))
        log.write_text(f"scaleprobe-job: OK {trace}\n")
        grid.manifest_rows.append(_row(bench, n, tpn, 1, pass_no, job, trace, log))
        return trace

    run("allreduce", allreduce, ALLREDUCE_ARGS, [1], 1, 1, "101")
    for pass_no in range(1, PASSES + 1):
        grid.passes.append(run("allreduce", allreduce, ALLREDUCE_ARGS, [2], 2, pass_no, f"10{1 + pass_no}"))
    grid.multi_node = _node_column(grid.passes[0])
    if grid.multi_node:
        run("allreduce", allreduce, ALLREDUCE_ARGS, [1, 1], 1, 1, "105")
        run("allreduce", allreduce, ALLREDUCE_ARGS, [2, 2], 2, 1, "106")
    layout = scratch / "tiny.txt"
    layout.write_text(TINY_LAYOUT)
    for tpn, job in ((1, "201"), (2, "202")):
        run("bucket_sweep", bucket, ["--layout", str(layout), *BUCKET_ARGS], [tpn], tpn, 1, job)

    # Runs that left no valid trace, each with the files its job would have left.
    good = grid.passes[0]
    failed = root / "allreduce_N4_t1_c1_mpirun_j107.h5"
    shutil.copyfile(good, f"{failed}.failed")
    (root / "logs" / "allreduce_N4_t1_c1_mpirun_j107.out").write_text(FAILED_LOG)
    partial = root / "allreduce_N1_t1_c2_mpirun_j109.h5"
    shutil.copyfile(good, f"{partial}.partial")
    unreadable = root / "allreduce_N2_t1_c2_mpirun_j110.h5"
    unreadable.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    for n, c, job, trace in ((4, 1, "107", failed), (8, 1, "108", root / "allreduce_N8_t1_c1_mpirun_j108.h5"),
                             (1, 2, "109", partial), (2, 2, "110", unreadable)):
        name = trace.name[: -len(".h5")]
        grid.manifest_rows.append(_row("allreduce", n, 1, c, 1, job, trace, root / "logs" / f"{name}.out"))
    write_manifest(root / "manifest.tsv", grid.manifest_rows)

    # A real checkpoint (HDF5, not a trace) where trainer jobs keep theirs.
    (root / "checkpoints").mkdir()
    proc = subprocess.run([str(gpt_train), "-m", "gpt-micro", "-B", "2", "-s", "2", "--synthetic-bytes", "20000",
                           "--val-batches", "0", "-q", "--save", str(root / "checkpoints" / "gpt_train_N1_t1_c1.h5"),
                           "-o", str(scratch / "checkpoint-run.h5")],
                          env={**mpi_env(), "OMP_NUM_THREADS": "1"}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr

    help_text = subprocess.run([str(allreduce), "--help"], capture_output=True, text=True, env=mpi_env()).stdout
    if "--scaling" in help_text:  # sizes per rank; the binary multiplies them by the ranks
        grid.weak = scratch / "weak"
        grid.weak.mkdir()
        for tpn in (1, 2):
            run_mpi(_mpmd(allreduce, [*ALLREDUCE_ARGS, "--scaling", "weak"], [tpn], grid.weak / f"w{tpn}.h5", **env))
    return grid
