"""Submitting a campaign, resumably.

For every point and pass: skip it when a trace of it passes trace_check or when its job (from
the manifest) is still queued; rename leftovers of failed runs to *.failed (scaleprobe-analyze
refuses a campaign holding *.partial files); submit the rest, one job each or one job array per
group of points that share a job's settings. Then, with analysis, one report job that waits for
every still-queued job of the campaign. Every printed sbatch line is complete and pasteable.
"""
from __future__ import annotations

import getpass
import itertools
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Set, Tuple

from . import dimensions, naming, slurm
from .campaign import Campaign, Point, Sweep
from .errors import SweepError
from .manifest import History, Manifest
from .settings import BINARIES

TRACE_CHECK_TIMEOUT_S = 300
PLACEHOLDER = "<jobid>"       # a dry run's job id


def say(line: str) -> None:
    print(line, flush=True)     # flushed: sbatch's own messages go to the same terminal


def offers_nccl(binary: Path) -> bool:
    """Whether the benchmark's --backend offers nccl (its --help lists the backends)."""
    if not os.access(binary, os.X_OK):
        return False
    try:
        helptext = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "nccl:" in helptext  # BackendOption's help lists each backend as "name: what it is"


def note(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def sbatch_options(time_limit: str, partition: str, account: str, qos: str, extra: Tuple[str, ...],
                   warn_before: int = 0, requeue: bool = False, exclusive: bool = False) -> List[str]:
    """The options every job of a sweep gets (the report job: without the benchmark ones).
    Benchmark jobs own their nodes (--exclusive) unless the sweep says --shared: another job's
    ranks on the same node would share its memory bandwidth, caches and network link."""
    opts = [f"--time={time_limit}"]
    opts += [f"--{k}={v}" for k, v in (("partition", partition), ("account", account), ("qos", qos)) if v]
    if warn_before:
        opts.append(f"--signal=B:USR1@{warn_before}")
    if requeue:
        opts.append("--requeue")
    if exclusive and not any(x == "--exclusive" or x.startswith("--exclusive=") for x in extra):
        opts.append("--exclusive")
    return opts + list(extra)


def geometry(nodes: int, tasks_per_node: int, cpus_per_task: int) -> List[str]:
    return [f"--nodes={nodes}", f"--ntasks-per-node={tasks_per_node}", f"--cpus-per-task={cpus_per_task}"]


def point_columns(p: Point) -> Dict[str, object]:
    """The manifest columns that say which point and pass a line is about."""
    return {"benchmark": p.sweep.bench, "nodes": p.nodes, "tasks_per_node": p.tasks_per_node,
            "cpus_per_task": p.cpus_per_task, **dict(p.dims), "pass": p.pass_no}


class Submitter:
    def __init__(self, campaign: Campaign, root: Path, command: List[str]):
        self.c, self.root, self.command = campaign, root, command
        self.dry = campaign.dry_run
        self.cdir = campaign.folder
        self.logs = self.cdir / "logs"
        self.check = campaign.build_dir / "bin" / "trace_check"
        self.manifest = Manifest(self.cdir / "manifest.tsv", write=not self.dry)
        self.history = History(self.cdir / "campaign.json")
        self.queued: Set[str] = set()
        self.new_ids: List[str] = []     # this call's benchmark jobs
        self.lines = 0                   # this call's benchmark sbatch lines (dry runs too)
        self.todo = 0                    # points (and passes) to run
        self._trace_ok: Dict[Path, bool] = {}

    # ------------------------------------------------------------ before anything is submitted

    def preflight(self) -> None:
        seen = set()
        for s in self.c.sweeps:
            script = self.root / "jobs" / f"{s.bench}.sbatch"
            if not script.is_file():
                raise SweepError(f"no job script {script}")
            binary = self.c.build_dir / BINARIES[s.bench]
            gpus = max(s.values("gpus_per_node"))
            if gpus and not offers_nccl(binary) and (binary, "nccl") not in seen:
                seen.add((binary, "nccl"))
                if not self.dry:
                    raise SweepError(f"--gpus-per-node {gpus} runs {s.bench} on --backend nccl, which "
                                     f"{binary} does not offer (built without CUDA and NCCL, or a trainer: trainers "
                                     "run on the CPU); only --dry-run shows those jobs")
                note(f"# note: {binary} has no --backend nccl: dry run only")
            if any(v != "none" for v in s.values("simulate")):
                sim_binary = self.c.sim_build_dir / BINARIES[s.bench]
                if not self.dry and not os.access(sim_binary, os.X_OK):
                    raise SweepError(f"no {sim_binary}: a simulated sweep runs the smpi build's programs "
                                     "(cmake --preset smpi && cmake --build --preset smpi, or SCALEPROBE_SIM_BUILD_DIR)")
            if binary in seen or os.access(binary, os.X_OK):
                continue
            seen.add(binary)
            if not self.dry:
                raise SweepError(f"no {binary}: build first (cmake --build --preset release) or pass --build-dir")
            note(f"# note: {binary} does not exist yet")
        if not self.dry and not os.access(self.check, os.X_OK):
            raise SweepError(f"no {self.check}: build first or pass --build-dir")
        if not self.dry and shutil.which("sbatch") is None:
            raise SweepError("sbatch not found: run this on a SLURM login node")
        # A new campaign has nothing queued: ask SLURM only about an existing one.
        if self.cdir.is_dir():
            try:
                self.queued = slurm.queued_job_ids()
            except SweepError:
                if not self.dry:
                    raise
                note("# note: squeue failed; treating no job of the campaign as queued")

    def record_call(self) -> None:
        self.cdir.mkdir(parents=True, exist_ok=True)
        self.history.append({
            "submitted_utc": utc(), "command": slurm.qline(self.command), "cwd": os.getcwd(),
            "host": socket.gethostname(), "user": getpass.getuser(),
            "campaign": self.c.describe()})

    # ------------------------------------------------------------ resume

    def trace_ok(self, path: Path) -> bool:
        if path not in self._trace_ok:
            ok = False
            if os.access(self.check, os.X_OK):
                try:
                    ok = subprocess.run([str(self.check), str(path)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, timeout=TRACE_CHECK_TIMEOUT_S).returncode == 0
                except subprocess.TimeoutExpired:
                    raise SweepError(f"trace_check {path} did not finish within {TRACE_CHECK_TIMEOUT_S} s") from None
            self._trace_ok[path] = ok
        return self._trace_ok[path]

    def needs_run(self, p: Point) -> bool:
        """The resume decision for one point and pass (prints it, records skips)."""
        row = dict(submitted_utc=utc(), **point_columns(p))
        job = self.manifest.queued_job(p.stem, self.queued)
        if job:
            say(f"# skip {p.stem}: job {job} is still queued or running")
            self.manifest.add(**row, status="queued", job_id=job)
            return False
        traces = sorted(self.cdir.glob(f"{p.stem}_j*.h5"))
        done = next((f for f in traces if self.trace_ok(f)), None)
        if done:
            say(f"# skip {p.stem}: complete ({done})")
            self.manifest.add(**row, status="complete", trace=str(done))
        # Leftovers of failed or killed runs would stop scaleprobe-analyze. (Not those of a job
        # still running, e.g. one submitted by hand: its name carries its job id.)
        for f in traces + sorted(self.cdir.glob(f"{p.stem}_j*.h5.partial")):
            if f == done or naming.job_tag_of(f, p.stem) in self.queued:
                continue
            if f.suffix == ".h5" and self.trace_ok(f):
                continue
            failed = f.with_name(f.name + ".failed")
            if self.dry:
                say(f"# would rename {f} to {failed}")
            else:
                os.replace(f, failed)
                say(f"# renamed {f} to {failed}")
        return done is None

    # ------------------------------------------------------------ submitting

    def sbatch(self, argv: List[str]) -> Tuple[str, str]:
        """Prints the sbatch line and (unless a dry run) submits it. -> (job id, the line)"""
        line = slurm.qline(["sbatch"] + argv)
        say(line)
        if self.dry:
            return PLACEHOLDER, line
        job = slurm.sbatch(argv)
        say(f"#   -> job {job}")
        return job, line

    def export(self, s: Sweep, values: Dict[str, object]) -> str:
        e = ",".join([self.export_base()] + dimensions.exports(values))
        e += f",SCALEPROBE_SRUN_MPI={s.srun_mpi}" if s.srun_mpi else ""
        return e + (",SCALEPROBE_REQUEUE=1" if s.requeue else "")

    def export_base(self) -> str:
        c = self.c
        e = (f"ALL,SCALEPROBE_ROOT={self.root},SCALEPROBE_BUILD_DIR={c.build_dir},"
             f"SCALEPROBE_RESULTS={c.results},SCALEPROBE_CAMPAIGN={c.name}")
        return e + (f",SCALEPROBE_SITE_ENV={c.site_env}" if c.site_env else "")

    def submit_benchmark(self, argv: List[str]) -> Tuple[str, str]:
        job, line = self.sbatch(argv)
        self.new_ids.append(job)
        self.lines += 1
        return job, line

    def record(self, p: Point, job: str, log: str, line: str) -> None:
        self.manifest.add(submitted_utc=utc(), **point_columns(p), status="submitted", job_id=job,
                          trace=self.cdir / naming.trace_name(p.stem, job), log=log, sbatch_command=line)

    def submit_group(self, s: Sweep, values: Dict[str, object], todo: List[Point]) -> None:
        """The points of one sweep that share every dimension's value: one job each, or one array."""
        tag = dimensions.tag(values)
        gpus = values["gpus_per_node"]
        # A simulation is one deterministic process: it needs no node of its own.
        exclusive = not s.shared and values["simulate"] == "none"
        options = ([f"--gpus-per-node={gpus}"] if gpus else []) + sbatch_options(
            s.time, s.partition, s.account, s.qos, s.sbatch_options, s.warn_before, s.requeue, exclusive)
        export = self.export(s, values)
        script = [str(self.root / "jobs" / f"{s.bench}.sbatch")] + list(s.args)
        # A simulated point is a one-task job: its nodes x tasks per node are SimGrid's hosts and ranks.
        simulated = values["simulate"] != "none"
        if simulated:
            export += f",SCALEPROBE_SIM_BUILD_DIR={self.c.sim_build_dir}"
        if not s.array_mode:
            for p in todo:
                name = naming.job_name(s.bench, p.nodes, p.tasks_per_node, p.cpus_per_task, tag, p.pass_no)
                point_env = f",SCALEPROBE_PASS={p.pass_no}" if p.pass_no > 1 else ""
                shape = geometry(p.nodes, p.tasks_per_node, p.cpus_per_task)
                if simulated:
                    shape = geometry(1, 1, 1)
                    point_env += f",SCALEPROBE_SIM_POINT={naming.array_entry(p.nodes, p.tasks_per_node, 1, 1)}"
                job, line = self.submit_benchmark(
                    ["--parsable", f"--job-name={name}"] + shape
                    + options + [f"--output={self.logs}/{p.stem}_j%j.out", f"--export={export}{point_env}"] + script)
                self.record(p, job, f"{self.logs}/{p.stem}_j{job}.out", line)
            return
        # SLURM gives every task of an array the same resources: each allocates the group's
        # largest point and runs its own point (SCALEPROBE_ARRAY_POINTS[task]) inside it.
        spec = ":".join(naming.array_entry(p.nodes, p.tasks_per_node, p.cpus_per_task, p.pass_no) for p in todo)
        largest = geometry(max(p.nodes for p in todo), max(p.tasks_per_node for p in todo),
                           max(p.cpus_per_task for p in todo)) if not simulated else geometry(1, 1, 1)
        job, line = self.submit_benchmark(
            ["--parsable", f"--job-name=sp-{s.bench}-array{tag}", f"--array=0-{len(todo) - 1}"] + largest + options
            + [f"--output={self.logs}/{s.bench}{tag}_array_j%A_%a.out",
               f"--export={export},SCALEPROBE_ARRAY_POINTS={spec}"] + script)
        for i, p in enumerate(todo):
            self.record(p, f"{job}_{i}", f"{self.logs}/{s.bench}{tag}_array_j{job}_{i}.out", line)

    def submit_report(self) -> None:
        """After every job of the campaign that is still queued, this call's included. afterany,
        not afterok: the report must also run (and list the failed points) when a job fails."""
        deps = sorted(set(self.manifest.campaign_queued(self.queued)) | set(self.new_ids) - {PLACEHOLDER}, key=int)
        dep: List[str] = []
        if self.dry and self.lines:
            dep = ["--dependency=afterany:" + "".join(d + ":" for d in deps) + "<job ids of the jobs above>"]
        elif deps:
            dep = ["--dependency=afterany:" + ":".join(deps)]
        r = self.c.report
        job, line = self.sbatch(
            ["--parsable", "--job-name=sp-report", "--ntasks=1"]
            + sbatch_options(r["time"], r["partition"], r["account"], r["qos"], r["sbatch_options"]) + dep
            + [f"--output={self.logs}/report_j%j.out", f"--export={self.export_base()}",
               str(self.root / "jobs" / "report.sbatch")])
        self.manifest.add(submitted_utc=utc(), benchmark="report", status="report", job_id=job,
                          trace=self.cdir / "report" / "report.md", log=f"{self.logs}/report_j{job}.out",
                          sbatch_command=line)

    # ------------------------------------------------------------ the whole call

    def run(self) -> int:
        self.preflight()
        if not self.dry:
            self.record_call()
        groups = itertools.groupby(self.c.points(), key=lambda p: (p.sweep, p.dims))
        for (s, dims), points in groups:
            values = dict(dims)
            described = [f"{key} {value}" for key, value in dims]
            if values["launcher"] == "srun":
                described[list(values).index("launcher")] += (f" --mpi={s.srun_mpi}" if s.srun_mpi
                                                              else " (the site's MpiDefault)")
            say(f"# submit-sweep: {s.bench}, campaign {self.c.name} ({self.cdir}), " + ", ".join(described)
                + (f", {s.repeat} passes" if s.repeat > 1 else "") + (", DRY RUN" if self.dry else ""))
            todo = [p for p in points if self.needs_run(p)]
            self.todo += len(todo)
            if todo:
                if not self.dry:
                    self.logs.mkdir(parents=True, exist_ok=True)
                self.submit_group(s, values, todo)
        if self.c.analysis:
            if not self.dry:
                self.logs.mkdir(parents=True, exist_ok=True)
            self.submit_report()
        if self.dry:
            say(f"# dry run: {self.todo} point(s) to run; nothing submitted, nothing written")
        else:
            say(f"# submitted {len(self.new_ids)} job(s) for {self.todo} point(s); manifest: {self.manifest.path}")
        return 0
