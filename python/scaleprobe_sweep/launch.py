"""Inside a job: the launcher command for a point's ranks (srun, Open MPI's or MPICH/Hydra's
mpirun) and the rank map, printed first and checked against the allocation before the benchmark.
"""
from __future__ import annotations

import os
import re
import subprocess
from typing import List, Optional

from .errors import JobError

THREAD_VARS = ("OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "OPENBLAS_NUM_THREADS")
# Run on every rank by the launcher: its rank, node and the CPUs it may run on.
RANK_PROBE = r'''r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-$SLURM_PROCID}}}
cpus=$(taskset -cp $$ 2>/dev/null) && cpus=${cpus##*: } || cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/$$/status)
echo "rankmap rank=$r node=${SLURMD_NODENAME:-?} nodeid=${SLURM_NODEID:-?} host=$(hostname) cpus=$cpus"'''


def set_threads(cpus_per_task: int) -> None:
    """One OpenMP (and OpenBLAS) thread per allocated CPU of the task, placed on cores."""
    os.environ.update(OMP_NUM_THREADS=str(cpus_per_task), OPENBLAS_NUM_THREADS=str(cpus_per_task))
    os.environ.setdefault("OMP_PROC_BIND", "close")
    os.environ.setdefault("OMP_PLACES", "cores")


def mpirun_flavor() -> str:
    """openmpi or mpich: which mpirun is on PATH (SCALEPROBE_MPIRUN_FLAVOR overrides the guess)."""
    flavor = os.environ.get("SCALEPROBE_MPIRUN_FLAVOR", "")
    if not flavor:
        try:
            r = subprocess.run(["mpirun", "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True, timeout=60)
            head = "\n".join(r.stdout.splitlines()[:5])
        except (OSError, subprocess.TimeoutExpired):
            head = ""
        if "Open MPI" in head or "OpenRTE" in head:
            flavor = "openmpi"
        elif any(w in head for w in ("HYDRA", "Hydra", "Intel(R) MPI", "MPICH")):
            flavor = "mpich"
        else:
            raise JobError(2, "mpirun --version names neither Open MPI nor MPICH/Hydra: set "
                              "SCALEPROBE_MPIRUN_FLAVOR=openmpi|mpich")
    if flavor not in ("openmpi", "mpich"):
        raise JobError(2, f"SCALEPROBE_MPIRUN_FLAVOR={flavor}: use openmpi or mpich")
    return flavor


def _provenance_vars() -> List[str]:
    # The programs record every SCALEPROBE_* variable: the launcher must pass them to remote ranks.
    return sorted(v for v in os.environ if v.startswith("SCALEPROBE_"))


def launch_command(launcher: str, nodes: int, tasks_per_node: int, cpus_per_task: int) -> List[str]:
    """The launcher for nodes x tasks_per_node ranks, cpus_per_task CPUs each."""
    ntasks = nodes * tasks_per_node
    if launcher == "srun":
        extra = os.environ.get("SCALEPROBE_SRUN_FLAGS", "").split()
        # 22.05's srun does not inherit --cpus-per-task from the job: always pass it.
        return ["srun", "--export=ALL", f"--nodes={nodes}", f"--ntasks={ntasks}", f"--ntasks-per-node={tasks_per_node}",
                f"--cpus-per-task={cpus_per_task}", "--kill-on-bad-exit=1"] + extra
    extra = os.environ.get("SCALEPROBE_MPIRUN_FLAGS", "").split()
    if mpirun_flavor() == "mpich":
        # MPICH's Hydra (also Intel MPI, MVAPICH): -ppn ranks per node, binding to the task's cores,
        # the variables the ranks need passed by name (Hydra starts ranks through SLURM itself).
        names = ",".join(list(THREAD_VARS) + _provenance_vars())
        return ["mpirun", "-n", str(ntasks), "-ppn", str(tasks_per_node), "-bind-to", f"core:{cpus_per_task}",
                "-genvlist", names] + extra
    mapping = f"ppr:{tasks_per_node}:node" + (f":PE={cpus_per_task}" if cpus_per_task > 1 else "")
    cmd = ["mpirun", "-np", str(ntasks), "--map-by", mapping]
    for v in THREAD_VARS:
        cmd += ["-x", v]
    cmd += extra
    for v in _provenance_vars():        # Open MPI passes only -x variables on to remote ranks
        cmd += ["-x", v]
    return cmd


def rank_map(launch: List[str], launcher: str, nodes: int, ntasks: int, want: str) -> None:
    """Prints the rank -> node -> cores map, made with the benchmark's launcher and layout, and
    stops the job (JobError) when the world it starts is not the point's."""
    cmd = launch + (["--mpi=none"] if launcher == "srun" else []) + ["bash", "-c", RANK_PROBE]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        out, rc = r.stdout, r.returncode
    except OSError as e:
        out, rc = str(e), 127
    lines = out.splitlines()
    ranks = sorted((line for line in lines if line.startswith("rankmap ")), key=lambda line: int(_field(line, "rank") or -1))
    print(f"# rank -> node -> cores ({launcher})")
    for line in ranks:
        print(line)
    for line in lines:
        if not line.startswith("rankmap "):
            print(f"# launcher: {line}")
    print("", end="", flush=True)
    if rc != 0:
        raise JobError(1, f"the rank-map step ({launcher}) failed with exit {rc}")
    distinct = {_field(line, "rank") for line in ranks} - {None}
    placed = {(_field(line, "node"), _field(line, "nodeid")) for line in ranks}
    if len(ranks) != ntasks or len(distinct) != ntasks:
        raise JobError(1, f"world size mismatch: {launcher} started {len(ranks)} ranks ({len(distinct)} distinct) "
                          f"but {want} needs {ntasks}; not running the benchmark")
    if len(placed) != nodes:
        raise JobError(1, f"node count mismatch: the ranks landed on {len(placed)} node(s), expected {nodes}")


def _field(line: str, key: str) -> Optional[str]:
    """The value of ` key=value` in a rank-map line (rank: digits only), or None."""
    m = re.search(rf" {key}=({'[0-9]+' if key == 'rank' else '[^ ]*'})", line)
    return m.group(1) if m else None
