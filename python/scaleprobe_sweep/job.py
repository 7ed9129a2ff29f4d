"""Inside a SLURM job: one benchmark run of one point, or a campaign's report. jobs/<bench>.sbatch
sources the site file and then runs this in the batch shell's process (jobs/lib/job.sh):

  python -m scaleprobe_sweep.job BENCH [BENCHMARK ARGS...]    (allreduce, ..., gpt_train)
  python -m scaleprobe_sweep.job report [scaleprobe-analyze report ARGS...]

Settings come from the environment (docs/slurm.md lists them): SCALEPROBE_ROOT, _BUILD_DIR,
_RESULTS, _CAMPAIGN, _SRUN_MPI, _SRUN_FLAGS, _MPIRUN_FLAGS, _MPIRUN_FLAVOR, _ARGS, _REQUEUE, _PASS,
_ARRAY_POINTS, _SIM_POINT, _SIM_BUILD_DIR, _SIM_FLAGS, and one variable per sweep dimension
(dimensions.py: _GPUS_PER_NODE, _SCALING, _LAUNCHER, _BACKEND, _SIMULATE). The point comes from the allocation (or, in an array of submit-sweep
--array-mode, from SCALEPROBE_ARRAY_POINTS[task]); its trace is
<results>/<campaign>/<point>[_p<pass>]_j<job>.h5, checked with trace_check. The job exports
SCALEPROBE_POINT, SCALEPROBE_PASS, SCALEPROBE_CAMPAIGN and every dimension's variable: the programs
record every SCALEPROBE_* variable in the trace's /provenance/env.

Messages are `scaleprobe-job: ...`; a stop is one line `scaleprobe-job: error: ...` with exit 2
(bad configuration or usage) or 1 (the run failed), its trace moved aside as *.failed.
"""
from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List

from . import benchargs, dimensions, naming
from .errors import JobError
from .launch import launch_command, mpirun_flavor, rank_map, set_threads
from .settings import BENCHES, BINARIES, TRAINERS, campaign_name_ok, CAMPAIGN_NAME_HINT
from .submit import offers_nccl
from .trainer_job import run_trainer, trainer_interrupted

PROG = "scaleprobe-job"


def log(line: str) -> None:
    print(f"{PROG}: {line}", flush=True)


def warn(line: str) -> None:
    print(f"{PROG}: warning: {line}", file=sys.stderr, flush=True)


@dataclass
class Settings:
    root: Path
    build: Path
    results: Path
    campaign: str
    srun_mpi: str
    values: Dict[str, Any]           # every dimension's value (dimensions.resolve applied)

    @property
    def campaign_dir(self) -> Path:
        return self.results / self.campaign


def read_settings(env: Dict[str, str]) -> Settings:
    """Defaults and checks of the SCALEPROBE_* settings (after the site file)."""
    root = Path(env.get("SCALEPROBE_ROOT") or Path(__file__).resolve().parents[2])
    if (root / "installed").is_file():    # <prefix>/share/scaleprobe (cmake --install)
        build = Path(env.get("SCALEPROBE_BUILD_DIR") or root.parent.parent)
        results = Path(env.get("SCALEPROBE_RESULTS") or Path(env.get("SLURM_SUBMIT_DIR") or os.getcwd()) / "results")
    else:
        build = Path(env.get("SCALEPROBE_BUILD_DIR") or root / "build" / "release")
        results = Path(env.get("SCALEPROBE_RESULTS") or root / "results")
    campaign = env.get("SCALEPROBE_CAMPAIGN") or "default"
    if not campaign_name_ok(campaign):
        raise JobError(2, f"campaign '{campaign}': {CAMPAIGN_NAME_HINT}")
    values = {}
    for d in dimensions.DIMENSIONS:
        text = env.get(d.env, "")
        if not text and d.key == "gpus_per_node":
            text = env.get("SLURM_GPUS_PER_NODE", "")
        text = dimensions.ENV_READERS.get(d.key, str)(text)
        try:
            values[d.key] = d.parse(text) if text else d.default
        except dimensions.BadValue as e:
            raise JobError(2, f"{d.env}={text}: {e}") from None
    try:
        values = dimensions.resolve(values, lambda key, value: f"{dimensions.BY_KEY[key].env}={value}")
    except dimensions.BadValue as e:
        raise JobError(2, str(e)) from None
    return Settings(root, build, results, campaign, env.get("SCALEPROBE_SRUN_MPI", ""), values)


@dataclass
class Geometry:
    nodes: int
    tasks_per_node: int
    cpus_per_task: int
    pass_no: int
    job_tag: str                     # <job> or <array job>_<task>: the trace's _j part
    inside_larger: bool              # an array task's point inside the group's largest allocation
    simulated: bool = False          # nodes x tasks per node are SimGrid's, not the allocation's

    @property
    def ntasks(self) -> int:
        return self.nodes * self.tasks_per_node


def read_geometry(env: Dict[str, str], simulated: bool = False) -> Geometry:
    """The point this job runs, from its allocation (and SCALEPROBE_ARRAY_POINTS in an array), or
    for a simulated point from SCALEPROBE_SIM_POINT (or the array entry): any size, in one task."""
    if not env.get("SLURM_JOB_ID"):
        raise JobError(2, "not inside a SLURM allocation: submit with sbatch (see docs/slurm.md)")
    nodes = env.get("SLURM_JOB_NUM_NODES") or env.get("SLURM_NNODES") or ""
    ntasks = env.get("SLURM_NTASKS", "")
    if not nodes:
        raise JobError(2, "SLURM_JOB_NUM_NODES is not set")
    if not ntasks:
        raise JobError(2, "the allocation has no task count: submit with --nodes=N --ntasks-per-node=T")
    m = re.fullmatch(r"([0-9]+)(\(x[0-9]+\))?", env.get("SLURM_TASKS_PER_NODE", ""))
    tpn = env.get("SLURM_NTASKS_PER_NODE") or (m.group(1) if m else "")
    if not tpn:
        raise JobError(2, "uneven tasks per node (SLURM_TASKS_PER_NODE="
                          f"{env.get('SLURM_TASKS_PER_NODE', 'unset')}): submit with --ntasks-per-node")
    n, t, c = int(nodes), int(tpn), int(env.get("SLURM_CPUS_PER_TASK") or 1)
    if int(ntasks) != n * t:
        raise JobError(2, f"SLURM_NTASKS={ntasks} is not nodes x tasks per node ({n} x {t}): submit with "
                          "--nodes and --ntasks-per-node")
    tag = env["SLURM_JOB_ID"]
    if env.get("SLURM_ARRAY_JOB_ID"):
        tag = f"{env['SLURM_ARRAY_JOB_ID']}_{env.get('SLURM_ARRAY_TASK_ID', '')}"
    pass_text = env.get("SCALEPROBE_PASS") or "1"
    geometry = Geometry(n, t, c, 0, tag, False, simulated)
    if simulated and not env.get("SCALEPROBE_ARRAY_POINTS"):
        entry = env.get("SCALEPROBE_SIM_POINT", "")
        m = re.fullmatch(r"([1-9][0-9]*)x([1-9][0-9]*)x1", entry)
        if not m:
            raise JobError(2, f"SCALEPROBE_SIM_POINT={entry}: a simulated point needs its NODESxTASKSx1 "
                              "(submit-sweep --simulate sets it)")
        geometry = Geometry(int(m.group(1)), int(m.group(2)), 1, 0, tag, False, True)
    points = env.get("SCALEPROBE_ARRAY_POINTS", "")
    if points:
        # submit-sweep --array-mode: every task holds the group's largest point and runs its own one.
        task = env.get("SLURM_ARRAY_TASK_ID")
        if task is None:
            raise JobError(2, "SCALEPROBE_ARRAY_POINTS is set but this is not an array job")
        entries = points.split(":")
        entry = entries[int(task)] if task.isdigit() and int(task) < len(entries) else ""
        m = re.fullmatch(r"([1-9][0-9]*)x([1-9][0-9]*)x([1-9][0-9]*)(p([1-9][0-9]*))?", entry)
        if not m:
            raise JobError(2, f"no point for array task {task} in SCALEPROBE_ARRAY_POINTS={points}")
        geometry = Geometry(int(m.group(1)), int(m.group(2)), int(m.group(3)), 0, tag, not simulated, simulated)
        pass_text = m.group(5) or "1"
        if not simulated and (geometry.nodes > n or geometry.tasks_per_node > t or geometry.cpus_per_task > c):
            raise JobError(2, f"point {entry} does not fit the allocation ({n}x{t}x{c})")
    if not re.fullmatch(r"[1-9][0-9]*", pass_text):
        raise JobError(2, f"SCALEPROBE_PASS={pass_text}: not a pass number (1, 2, ...)")
    geometry.pass_no = int(pass_text)
    return geometry


def quarantine(trace: Path) -> None:
    """Moves this job's trace (complete or partial) aside as *.failed."""
    for f in (trace, Path(f"{trace}.partial")):
        if f.exists():
            os.replace(f, f"{f}.failed")
            warn(f"moved {f} to {f}.failed")


@dataclass
class Programs:
    """How this point runs: the benchmark, the trace checker and the command prefix that starts the
    benchmark's ranks (a launcher, or scripts/simulate for a simulated point)."""
    binary: Path
    check: List[str]
    launch: List[str]
    how: str                         # the launcher as the log names it


def real_programs(s: Settings, g: Geometry, bench: str, env: Dict[str, str]) -> Programs:
    binary = s.build / BINARIES[bench]
    if not os.access(binary, os.X_OK):
        raise JobError(2, f"no {binary}: build first (cmake --preset release && cmake --build --preset release) "
                          "or set SCALEPROBE_BUILD_DIR")
    gpus = s.values["gpus_per_node"]
    if gpus:
        if not offers_nccl(binary):
            raise JobError(2, f"--gpus-per-node={gpus} runs {bench} on --backend nccl, which {binary} does not offer "
                              "(built without CUDA and NCCL, or a trainer: trainers run on the CPU); run without GPUs")
        if g.tasks_per_node != gpus:
            warn(f"{g.tasks_per_node} tasks per node for {gpus} GPUs per node (one rank per GPU is usual)")
    check = s.build / "bin" / "trace_check"
    if not os.access(check, os.X_OK):
        raise JobError(2, f"no {check} in SCALEPROBE_BUILD_DIR={s.build}")
    launcher = s.values["launcher"]
    launch = launch_command(launcher, g.nodes, g.tasks_per_node, g.cpus_per_task)
    how = (f"srun --mpi={s.srun_mpi or '<site MpiDefault>'}" if launcher == "srun" else f"mpirun ({mpirun_flavor()})")
    return Programs(binary, [str(check)], launch, how)


def simulated_programs(s: Settings, g: Geometry, bench: str, env: Dict[str, str]) -> Programs:
    """The smpi build's programs under scripts/simulate, on a platform of the point's nodes x tasks
    per node (SCALEPROBE_SIM_FLAGS: more of its options, e.g. --link-bandwidth 25GBps)."""
    build = Path(env.get("SCALEPROBE_SIM_BUILD_DIR") or s.root / "build" / "smpi")
    binary = build / BINARIES[bench]
    for p in (binary, build / "bin" / "trace_check"):
        if not os.access(p, os.X_OK):
            raise JobError(2, f"no {p}: a simulated point runs the smpi build (cmake --preset smpi && "
                              "cmake --build --preset smpi, or SCALEPROBE_SIM_BUILD_DIR)")
    simulate = [sys.executable, str(s.root / "scripts" / "simulate"), "--build", str(build)]
    flags = env.get("SCALEPROBE_SIM_FLAGS", "").split()
    topology = ["--topology", s.values["simulate"]]  # the dimension's value is the platform's topology
    return Programs(binary, simulate + ["--nodes", "1", "--ranks-per-node", "1", "trace_check"],
                    simulate + flags + topology + ["--nodes", str(g.nodes), "--ranks-per-node", str(g.tasks_per_node)],
                    f"scripts/simulate ({s.values['simulate']} platform{', ' + ' '.join(flags) if flags else ''})")


def run_benchmark(bench: str, given: List[str]) -> int:
    env = dict(os.environ)
    s = read_settings(env)
    values = s.values
    g = read_geometry(env, simulated=values["simulate"] != "none")
    set_threads(g.cpus_per_task)
    if not given and env.get("SCALEPROBE_ARGS"):
        given = env["SCALEPROBE_ARGS"].split()
    problem = benchargs.problem(bench, given)
    if problem:
        raise JobError(2, problem)
    # The programs scale weak sizes and batches themselves (sizes and -B per rank).
    args = given + dimensions.program_options(bench, values)
    point = dimensions.point_name(bench, g.nodes, g.tasks_per_node, g.cpus_per_task, values)
    stem = naming.stem(point, g.pass_no)
    trace = s.campaign_dir / naming.trace_name(stem, g.job_tag)
    os.environ.update(SCALEPROBE_POINT=point, SCALEPROBE_PASS=str(g.pass_no), SCALEPROBE_CAMPAIGN=s.campaign,
                      **dict(e.split("=", 1) for e in dimensions.exports(values)))
    # After the exports: an mpirun command names every SCALEPROBE_* variable it passes on.
    programs = (simulated_programs if g.simulated else real_programs)(s, g, bench, env)
    s.campaign_dir.mkdir(parents=True, exist_ok=True)
    if trace.exists():
        raise JobError(2, f"{trace} already exists")

    log(f"{bench} job {g.job_tag} on {env.get('SLURM_JOB_NODELIST', '?')} (cluster {env.get('SLURM_CLUSTER_NAME', '?')})")
    log(f"point: {point} pass={g.pass_no} nodes={g.nodes} tasks_per_node={g.tasks_per_node} "
        f"cpus_per_task={g.cpus_per_task} ranks={g.ntasks} "
        + " ".join(f"{k}={programs.how if k == 'launcher' else v}" for k, v in values.items()))
    if g.inside_larger:
        log(f"array task {env.get('SLURM_ARRAY_TASK_ID')} runs its point inside a {env.get('SLURM_JOB_NUM_NODES')}x"
            f"{env.get('SLURM_NTASKS_PER_NODE', '?')}x{env.get('SLURM_CPUS_PER_TASK', '1')} allocation")
    if g.simulated:
        log(f"SIMULATED: {g.nodes} x {g.tasks_per_node} ranks on a SimGrid platform, in this one task")
    log(f"threads: OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']} OMP_PROC_BIND={os.environ['OMP_PROC_BIND']} "
        f"OMP_PLACES={os.environ['OMP_PLACES']}")
    log(f"site file: {env.get('SP_SITE_FILE') or 'none'}")
    log(f"binary: {programs.binary} {' '.join(args)}")
    log(f"trace: {trace}")

    run = programs.launch
    if not g.simulated:
        want = (f"this array task's point ({g.nodes} x {g.tasks_per_node} = {g.ntasks} ranks)" if g.inside_larger
                else f"the allocation (SLURM_NTASKS={env.get('SLURM_NTASKS')})")
        launcher = values["launcher"]
        rank_map(run, launcher, g.nodes, g.ntasks, want)
        run = run + ([f"--mpi={s.srun_mpi}"] if launcher == "srun" and s.srun_mpi else [])
    program = [programs.binary.name] if g.simulated else [str(programs.binary)]
    started = time.monotonic()
    if bench in TRAINERS:
        rc = run_trainer(run + program + args, s.campaign_dir, stem, trace, log)
    else:
        rc = run_and_forward(run + program + args + ["-o", str(trace)], trace)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    log(f"ran {time.monotonic() - started:.1f} s, {children.ru_utime + children.ru_stime:.1f} s of CPU on this node "
        f"(the launcher and what it started here; a simulation: all of it), max RSS {children.ru_maxrss} KB")
    if rc != 0:
        quarantine(trace)
        raise JobError(1, f"{bench} exited with {rc} (trace, if any, moved to *.failed)")
    checked = subprocess.run(programs.check + [str(trace)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True)
    print(checked.stdout, end="", flush=True)
    if checked.returncode != 0:
        quarantine(trace)
        raise JobError(1, f"trace_check rejected {trace}")
    if bench in TRAINERS:
        attr = subprocess.run(programs.check + ["--attribute", "interrupted_by_signal", str(trace)],
                              stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
        if attr != "0":
            trainer_interrupted(trace, s.campaign_dir, stem, env, log)
            return 0
    m = re.search(r" ranks=([0-9]+)", checked.stdout)
    if m and int(m.group(1)) != g.ntasks:
        quarantine(trace)
        raise JobError(1, f"the trace has {m.group(1)} ranks, the point {g.ntasks}")
    log(f"OK {trace}")
    return 0


def run_and_forward(cmd: List[str], trace: Path) -> int:
    """Runs a benchmark. A job killed at its time limit gets SIGTERM first: its partial trace is
    moved aside so the campaign stays readable (scaleprobe-analyze refuses *.partial) and a resume
    reruns the point."""
    stopped: List[int] = []
    proc = subprocess.Popen(cmd)

    def stop(signum: int, _frame: Any) -> None:
        stopped.append(signum)
        proc.send_signal(signum)
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        rc = proc.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if stopped:
        quarantine(trace)
        raise JobError(1, "terminated (time limit or scancel)")
    return rc


def run_report(args: List[str]) -> int:
    env = dict(os.environ)
    s = read_settings(env)
    if not s.campaign_dir.is_dir():
        raise JobError(2, f"no campaign folder {s.campaign_dir}")
    log(f"report of {s.campaign_dir} (job {env.get('SLURM_JOB_ID') or 'none'})")
    analyze = s.root / "analysis" / "scaleprobe-analyze"
    if subprocess.run([str(analyze), "report", str(s.campaign_dir)] + args).returncode != 0:
        raise JobError(1, f"scaleprobe-analyze report {s.campaign_dir} failed")
    log(f"OK {s.campaign_dir}/report/report.md")
    return 0


def main(argv: List[str]) -> int:
    if not argv or argv[0] not in BENCHES + ("report",):
        print(f"{PROG}: error: usage: python -m scaleprobe_sweep.job {'|'.join(BENCHES)}|report [ARGS...]",
              file=sys.stderr)
        return 2
    try:
        return run_report(argv[1:]) if argv[0] == "report" else run_benchmark(argv[0], argv[1:])
    except JobError as e:
        sys.stdout.flush()
        print(f"{PROG}: error: {e}", file=sys.stderr, flush=True)
        return e.rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
