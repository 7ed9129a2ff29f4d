"""Running one side of a comparison and reading its number back from what it stored.

Every run writes its raw output under the campaign's raw/ folder (traces, JSON lines, logs), and
every number in the summary is read back from those files, so the summary can be recomputed from
them. Both sides of a pair get the same explicit thread variables (OMP_NUM_THREADS and
OPENBLAS_NUM_THREADS) on top of the caller's environment; a trainer/PyTorch pair whose recorded
kernel-relevant variables still differ is refused.
"""
from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .torch_peer import WARMUP_STEPS  # (torch_peer imports torch only where it is used)

# h5py and the analysis package are imported where they are used: the scaling runs (scaling.py)
# also run on the GPU node, whose Python has torch but neither h5py nor pandas.
PYTHON_TREE = Path(__file__).resolve().parents[1]  # python/: the peers import this package from it
REPO = PYTHON_TREE.parent

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_mpi_yield_when_idle": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1"}
# This interpreter: scripts/bench-peers runs $SCALEPROBE_PYTHON, else Debian's (torch and h5py).
PYTHON = sys.executable


class PeerError(Exception):
    """A run that failed or a pair that cannot be compared; str() is one line."""


@dataclass
class Context:
    build: Path  # a build folder, or a folder holding the programs themselves (a device bundle's bin/)
    raw: Path
    native_build: Optional[Path] = None  # the isa comparison's peer: a build of the native preset
    python: str = PYTHON  # the PyTorch peers' interpreter
    peer_env: dict = field(default_factory=dict)  # added to the PyTorch peers' environment only

    def native(self) -> "Context":
        if self.native_build is None:
            raise PeerError("the isa comparison needs --native-build-dir (a build of the native preset)")
        return Context(self.native_build, self.raw, python=self.python, peer_env=self.peer_env)

    def peer(self, module: str, *args: str) -> list[str]:
        """A PyTorch peer's command line: python -m scaleprobe_peers.<module> args."""
        return [self.python, "-m", f"{__package__}.{module}", *args]

    def peer_environment(self, env: dict) -> dict:
        """env for a PyTorch peer: the python/ tree first on PYTHONPATH, then peer_env."""
        path = os.pathsep.join(p for p in (str(PYTHON_TREE), os.environ.get("PYTHONPATH", "")) if p)
        return {**env, "PYTHONPATH": path, **self.peer_env}

    def binary(self, kind: str) -> str:
        rel = {"allreduce": "collectives/allreduce_perf", "gpt": "trainers/gpt/gpt_train",
               "resnet": "trainers/resnet/resnet_train"}[kind]
        path = self.build / rel
        return str(path if path.exists() or not (self.build / path.name).exists() else self.build / path.name)


def threads_env(threads: int) -> dict:
    return {"OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads)}


def run(cmd: list[str], log: Path, env: dict, timeout: float = 1800) -> None:
    """Runs cmd with env added, stdout and stderr to log; PeerError naming the log on failure. Past
    timeout its whole process group (mpirun and its ranks, a launcher and its workers) is killed."""
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **MPI_ENV, **env},
                                start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_group(proc)
            raise PeerError(f"{cmd[0]} timed out after {timeout:.0f} s (log {log})")
        except BaseException:  # interrupted: its own session does not get the terminal's signal
            stop_group(proc)
            raise
    if code != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["(no output)"]
        raise PeerError(f"{cmd[0]} exited with {code} (log {log}): {tail[0]}")


def stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the process group proc leads (it was started with start_new_session: the group is
    this run's and nothing else), up to 5 s for the leader, then SIGKILL to whatever is left of it."""
    for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, 30)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass


def mpirun(ranks: int) -> list[str]:
    return ["mpirun", "-np", str(ranks), "--oversubscribe", "--bind-to", "none", "-x", "OMP_NUM_THREADS",
            "-x", "OPENBLAS_NUM_THREADS"]


def text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def kernel_isa(path: Path) -> str:
    """The kernel variant a trainer trace ran (its provenance's kernel_isa; '?' in older traces)."""
    from scaleprobe_analysis.h5open import open_h5
    with open_h5(path) as f:
        prov = f["provenance"].attrs
        isa = text(prov.get("kernel_isa", "?"))
        # "baseline" is the build's own -march (isa_baseline): x86-64-v3, native, ...
        return f"{isa} = {text(prov.get('isa_baseline', '?'))}" if isa == "baseline" else isa


def trace_median_step_s(path: Path) -> float:
    """A 1-rank trainer trace: the median step time after the first WARMUP_STEPS steps (as the peer)."""
    from scaleprobe_analysis.h5open import open_h5
    with open_h5(path) as f:
        steps = f["steps"]
        order = steps["step"][()].argsort()
        return statistics.median(steps["step_wall_s"][()][order][WARMUP_STEPS:])


def trace_case_median_s(path: Path) -> dict[str, float]:
    """A data-parallel trace: per bucket cap, the median over summarised steps of the slowest rank's step."""
    from scaleprobe_analysis.h5open import open_h5
    with open_h5(path) as f:
        c = f["cases"]
        return {text(cap): float(t) for cap, t in zip(c["bucket_cap"][()], c["iteration_median_s"][()])}


# --- the sides ---------------------------------------------------------------------------------

def allreduce_run(ctx: Context, cfg: dict, pass_no: int) -> Path:
    trace = ctx.raw / f"allreduce_p{pass_no}.h5"
    cmd = [*mpirun(cfg["ranks"]), ctx.binary("allreduce"), "--sizes", cfg["sizes"], "-a", "all", "-q", "-o", str(trace)]
    if cfg["iters"]:
        cmd += ["-n", str(cfg["iters"])]
    run(cmd, trace.with_suffix(".log"), threads_env(1))
    return trace


def gloo_run(ctx: Context, cfg: dict, pass_no: int) -> Path:
    """allreduce_perf --backend gloo -a all (sizes in bytes, default iterations), ranks unbound."""
    trace = ctx.raw / f"gloo_p{pass_no}.h5"
    run([*mpirun(cfg["ranks"]), ctx.binary("allreduce"), "--backend", "gloo", "--sizes", cfg["sizes"], "-a", "all",
         "--no-membw", "-q", "-o", str(trace)], trace.with_suffix(".log"), threads_env(1))
    return trace


def torch_gloo_run(ctx: Context, cfg: dict, pass_no: int) -> Path:
    out = ctx.raw / f"torch_gloo_p{pass_no}.jsonl"
    run(ctx.peer("gloo_torch", str(cfg["ranks"]), cfg["sizes"], str(out)), out.with_suffix(".log"),
        ctx.peer_environment(threads_env(1)))
    return out


# Latency statistics both allreduce sides record alike: p50_us (median over calls of the slowest
# rank's time: the one to compare, a tail cannot move it) and t_mean_us (beside it: a tail shows).
LATENCY_STATS = ("p50_us", "t_mean_us")


def torch_gloo_times(path: Path, stat: str = "p50_us") -> dict[int, float]:
    """bytes -> stat (LATENCY_STATS) of PyTorch's Gloo allreduce."""
    return {d["bytes"]: float(d[stat]) for d in map(json.loads, path.read_text().splitlines()) if d}


def allreduce_times(trace: Path, stat: str = "p50_us") -> dict[tuple[str, int], float]:
    """(algorithm, bytes) -> stat (LATENCY_STATS) of that case in the run."""
    from scaleprobe_analysis.h5open import open_h5
    with open_h5(trace) as f:
        s = f["summary"]
        return {(text(a), int(b)): float(t) for a, b, t in zip(s["algorithm"][()], s["bytes"][()], s[stat][()])}


def trainer_args(kind: str, cfg: dict) -> list[str]:
    """The trainer's data options for a timing run (no validation; ResNet: enough synthetic images)."""
    if kind == "gpt":
        return ["--val-batches", "0"]
    return ["--synthetic-images", str(cfg["batch"] * cfg["steps"]), "--synthetic-test", "1", "--val-images", "0"]


def init_command(ctx: Context, kind: str, model: str) -> list[str]:
    """The 1-step run whose --save-init checkpoint holds the initial weights both sides start from."""
    init = ctx.raw / f"init_{kind}_{model}.h5"
    cfg = {"model": model, "batch": 2, "steps": 1}
    return [ctx.binary(kind), "-m", model, "-B", "2", "-s", "1", *trainer_args(kind, cfg), "-q", "--save-init",
            str(init), "-o", str(init.with_suffix(".trace.h5"))]


def make_init(ctx: Context, kind: str, model: str) -> Path:
    init = ctx.raw / f"init_{kind}_{model}.h5"
    run(init_command(ctx, kind, model), init.with_suffix(".log"), threads_env(1))
    init.with_suffix(".trace.h5").unlink()
    return init


def weights_fingerprint(init: Path) -> str:
    """sha256 over the checkpoint's /model tensors in name order: identifies the initial weights once
    the (large, seed-reproducible) checkpoint file itself is deleted."""
    import hashlib

    from scaleprobe_analysis.h5open import open_h5
    digest = hashlib.sha256()
    with open_h5(init) as f:
        for name in sorted(f["model"]):
            digest.update(name.encode())
            digest.update(f["model"][name][()].tobytes())
    return digest.hexdigest()


def blas_core_for_both_sides(ctx: Context) -> tuple[str, str] | None:
    """The OpenBLAS core both sides of every comparison must run when the trainers would choose one
    OpenBLAS did not detect: (core, the trainer's reason), else None. A trainer whose OpenBLAS
    detects a generic core on a newer CPU starts again with OPENBLAS_CORETYPE set (kernels/blas_core.hpp);
    a PyTorch peer on the same OpenBLAS would keep the generic core, so the caller exports the core
    for both. None when the caller set OPENBLAS_CORETYPE (both sides get it already) or OpenBLAS's own
    detection stands. The probe's log stays in raw/ (blas_probe.log)."""
    if os.environ.get("OPENBLAS_CORETYPE"):
        return None
    from scaleprobe_analysis.trace import load_trace
    trace = ctx.raw / "blas_probe.h5"
    run([ctx.binary("gpt"), "-m", "gpt-micro", "-s", "1", "--val-batches", "0", "-q", "-o", str(trace)],
        trace.with_suffix(".log"), threads_env(1))
    attrs = load_trace(trace).attrs
    trace.unlink()  # not one of the campaign's runs
    core, reason = str(attrs.get("blas_core", "")), str(attrs.get("blas_core_reason", ""))
    return (core, reason) if core and reason.startswith("chosen by scaleprobe") else None


def trainer_run(ctx: Context, kind: str, cfg: dict, threads: int, tag: str, init: Path) -> Path:
    """One 1-rank trainer run from init (--init-from); returns its trace."""
    trace = ctx.raw / f"{tag}.h5"
    run([ctx.binary(kind), "-m", cfg["model"], "-B", str(cfg["batch"]), "-s", str(cfg["steps"]),
         *trainer_args(kind, cfg), "-q", "--init-from", str(init), "-o", str(trace)], trace.with_suffix(".log"),
        threads_env(threads))
    return trace


def torch_run(ctx: Context, kind: str, cfg: dict, threads: int, init: Path, tag: str) -> Path:
    out = ctx.raw / f"{tag}.json"
    run(ctx.peer(f"{kind}_torch", "--model", cfg["model"], "--threads", str(threads), "--batch", str(cfg["batch"]),
                 "--steps", str(cfg["steps"]), "--init", str(init)),
        out.with_suffix(".log"), ctx.peer_environment(threads_env(threads)))
    # run() sent stdout to the log: the JSON line is its last line
    line = out.with_suffix(".log").read_text().strip().splitlines()[-1]
    out.write_text(line + "\n")
    return out


def torch_result(path: Path) -> dict:
    return json.loads(path.read_text())


def check_same_kernel_env(trace: Path, peer: dict) -> None:
    from scaleprobe_analysis.trace import load_trace
    ours = load_trace(trace).kernel_env
    if ours != peer["kernel_env"]:
        raise PeerError(f"{trace.name} and its PyTorch peer ran under different kernel environments: "
                        f"{ours} vs {peer['kernel_env']}")


def dp_run(ctx: Context, cfg: dict, ranks: int, tag: str, caps: str, batch_args: list[str], init: Path,
           backend: str = "gloo") -> Path:
    """gpt_train on ranks ranks cycling caps; steps = (steps + 1 warm-up round) per cap. Gloo by
    default: the transport PyTorch DDP's peer uses, so a comparison with it is like for like."""
    trace = ctx.raw / f"{tag}.h5"
    ncaps = len(caps.split(","))
    cmd = [*mpirun(ranks), ctx.binary("gpt"), "-m", cfg["model"], *batch_args, "-s", str(ncaps * (cfg["steps"] + 1)),
           "-a", "ring", "--bucket-cap-mb", caps, "--backend", backend, "--val-batches", "0", "-q",
           "--init-from", str(init), "-o", str(trace)]
    run(cmd, trace.with_suffix(".log"), threads_env(1))
    return trace


def ddp_torch_run(ctx: Context, cfg: dict, ranks: int, batch: int, tag: str, caps: str, init: Path) -> Path:
    out = ctx.raw / f"{tag}.jsonl"
    run(ctx.peer("gpt_ddp_torch", "--model", cfg["model"], "--batch", str(batch), "--steps", str(cfg["steps"]),
                 "--caps", caps, "--ranks", str(ranks), "--threads", "1", "--no-baseline", "--init", str(init),
                 "--raw", str(out.with_suffix(".raw.json"))), out.with_suffix(".log"),
        ctx.peer_environment(threads_env(1)))
    json_lines(out.with_suffix(".log"), out)
    return out


def json_lines(log: Path, out: Path) -> None:
    """A PyTorch peer's JSON lines (its stdout, in log with the rest) into out, one per line."""
    lines = [line for line in log.read_text().splitlines() if line.startswith("{")]
    out.write_text("\n".join(lines) + "\n")


def ddp_torch_case_median_s(path: Path) -> dict[str, float]:
    return {d["cap"]: float(d["iteration_median_s"]) for d in map(json.loads, path.read_text().splitlines()) if d}
