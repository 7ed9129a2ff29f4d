"""What the PyTorch peers share ({gpt,resnet}_torch.py: one rank; {gpt,resnet}_ddp_torch.py:
DistributedDataParallel on gloo, see :func:`ddp_main`).

A peer must be the best ordinary use of PyTorch, on the same numbers, or the ratio flatters us:
- it starts from scaleprobe's own initial weights (the trainer's ``--save-init`` checkpoint: one
  float32 dataset per parameter under /model, named as PyTorch names them), and both sides print
  their first-step loss so "the same model" can be checked, not assumed;
- threads are bound before any work (``OMP_NUM_THREADS`` and ``OPENBLAS_NUM_THREADS`` are set by
  the caller before Python starts; here ``torch.set_num_threads`` and one inter-op thread);
- ``WARMUP_STEPS`` steps are run untimed-for-statistics (PyTorch's allocator and oneDNN
  primitives settle over the first two or three steps, which made a mean over the early steps
  read slow on gpt-tiny), and the median is reported beside the mean;
- what PyTorch was built with and which kernel variables were set is recorded
  (``torch.__config__.show()``, threads, ``OMP_*``/``OPENBLAS_*``/``MKL_*``/``ONEDNN_*``... values).
Tried on gpt-tiny at 1 thread, with no change beyond the run-to-run noise (those runs were not
stored): building the causal mask once instead of per forward, ``zero_grad(set_to_none=True)``,
AdamW's foreach path.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

# torch, numpy and h5py (through open_h5) are imported where they are used: the DDP launcher and scripts/bench-peers
# need none of them, and the GPU node's Python has torch but no h5py (no --init there).
if TYPE_CHECKING:
    import torch

WARMUP_STEPS = 3  # excluded from the statistics on both sides (runs.py applies it to the trainer's side)
# The same list as scaleprobe_analysis/trace.py (a test checks): bench-peers compares the two sides.
KERNEL_ENV_PREFIXES = ("OMP_", "OPENBLAS_", "GOTO_", "MKL_", "KMP_", "GOMP_", "ONEDNN_", "DNNL_")


def peer_arguments(trainer: str, presets: dict, default_model: str, default_batch: int) -> argparse.Namespace:
    """The command line every peer takes: --model (a key of ``presets``), --threads, --batch,
    --steps and --init (the ``trainer``'s --save-init checkpoint)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=default_model, choices=sorted(presets))
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--batch", type=int, default=default_batch)
    ap.add_argument("--steps", type=int, default=14)
    ap.add_argument("--init", help=f"{trainer} --save-init checkpoint to start from")
    ap.add_argument("--profile", action="store_true",
                    help="run the timed steps under torch.profiler and add each op's self CPU time per step "
                         "(the counterpart of the trainer's --profile-kernels; the timings then include the "
                         "profiler's overhead)")
    return ap.parse_args()


def bind_threads(threads: int) -> None:
    import torch
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)


def open_h5(path: str):
    """The analysis package's one safe open (scaleprobe_analysis.h5open): the digest checked on the
    bytes h5py then reads; a file without a digest read in an isolated child process."""
    from scaleprobe_analysis.h5open import open_h5 as safe_open
    return safe_open(path)


def load_scaleprobe_weights(model: torch.nn.Module, path: str, expected_format: str) -> None:
    """Copies every parameter and buffer of a scaleprobe checkpoint into model, by PyTorch name.

    Raises ValueError naming the problem: another format, a missing or extra tensor, a shape.
    """
    import numpy as np
    import torch
    with open_h5(path) as f:
        fmt = f.attrs.get("format")
        fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
        if fmt != expected_format:
            raise ValueError(f"{path}: not a {expected_format} checkpoint (format {fmt!r})")
        stored = f["model"]
        state = model.state_dict()
        if set(stored) != set(state):
            raise ValueError(f"{path}: tensors differ: file only {sorted(set(stored) - set(state))}, "
                             f"model only {sorted(set(state) - set(stored))}")
        new = {}
        for name, ref in state.items():
            arr = stored[name][...]
            if tuple(arr.shape) != tuple(ref.shape):
                raise ValueError(f"{path}: {name} has shape {arr.shape}, the model {tuple(ref.shape)}")
            new[name] = torch.from_numpy(np.ascontiguousarray(arr)).to(ref.dtype)
    model.load_state_dict(new)


def check_against_stored_logits(model: torch.nn.Module, path: str, tol: float = 1e-3) -> float:
    """The max |logit difference| between model (in eval mode) and the logits the trainer stored for
    the checkpoint's fixed input (/check: tokens or images, and logits). ValueError beyond tol x
    max(1, max |logit|): then the peer is not running the trainer's model."""
    import numpy as np
    import torch
    with open_h5(path) as f:
        check = f["check"]
        name = next(k for k in check if k != "logits")
        raw = check[name][()]
        want = check["logits"][()]
    inputs = torch.from_numpy(raw.astype(np.int64 if raw.dtype.kind in "iu" else np.float32))
    was_training = model.training
    with torch.no_grad():
        got = model.eval()(inputs).numpy()
    model.train(was_training)
    diff = float(np.abs(got - want).max())
    if not diff <= tol * max(1.0, float(np.abs(want).max())):
        raise ValueError(f"{path}: the loaded model's logits differ from the trainer's by {diff:.3g}")
    return diff


def start_from_trainer_weights(model: torch.nn.Module, path: str, expected_format: str) -> float:
    """Loads the trainer's --save-init checkpoint into model and checks it against the logits the
    trainer stored (:func:`check_against_stored_logits`); returns their max difference."""
    load_scaleprobe_weights(model, path, expected_format)
    return check_against_stored_logits(model, path)


def identity(threads: int) -> dict:
    """The peer's side of the comparison: version, build configuration, threads, kernel variables."""
    import torch
    return {"impl": "torch " + torch.__version__, "threads": threads, "torch_threads": torch.get_num_threads(),
            "interop_threads": torch.get_num_interop_threads(), "torch_config": torch.__config__.show(),
            "kernel_env": {k: v for k, v in sorted(os.environ.items()) if k.startswith(KERNEL_ENV_PREFIXES)}}


def time_steps(step, steps: int, profile: bool = False) -> dict:
    """Runs step() (returning the loss tensor) ``steps`` times; statistics over all but the first
    WARMUP_STEPS: wall and process-CPU mean, wall median, and the first step's loss. With profile,
    the steps after the warm-up run under torch.profiler and "profile" lists every op by self CPU
    time per step (self: not counting the ops it called, so the rows add up to the profiled time)."""
    if steps <= WARMUP_STEPS:
        raise ValueError(f"--steps {steps}: at least {WARMUP_STEPS + 1} (the first {WARMUP_STEPS} are warm-up)")
    import contextlib
    walls, cpus, first_loss = [], [], None
    profiler = None
    with contextlib.ExitStack() as stack:
        for i in range(steps):
            if profile and i == WARMUP_STEPS:
                import torch.profiler
                profiler = stack.enter_context(torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]))
            w0, c0 = time.perf_counter(), time.process_time()
            loss = step()
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
            if first_loss is None:
                first_loss = float(loss)
    w, c = walls[WARMUP_STEPS:], cpus[WARMUP_STEPS:]
    out = {"steps": len(w), "warmup_steps": WARMUP_STEPS, "wall_mean_s": statistics.mean(w),
           "wall_median_s": statistics.median(w), "cpu_mean_s": statistics.mean(c), "first_loss": first_loss,
           "step_wall_s": walls}
    if profiler is not None:
        ops = [{"op": e.key, "calls_per_step": e.count / len(w), "self_ms_per_step": e.self_cpu_time_total / 1e3 / len(w)}
               for e in profiler.key_averages()]
        out["profile"] = sorted(ops, key=lambda o: -o["self_ms_per_step"])
    return out


def report(args: argparse.Namespace, timings: dict, logit_diff: float | None, **rates) -> None:
    """Prints the peer's JSON line: its identity, the :func:`time_steps` timings, where its weights
    came from (and their logit check, None without --init), then ``rates`` (e.g. tokens_per_s)."""
    print(json.dumps({**identity(args.threads), **timings, "init": args.init or "pytorch default",
                      "init_logit_max_diff": logit_diff, **rates}))


# --------------------------------------------------------------------------------------------------
# Data-parallel peers: PyTorch DistributedDataParallel (gloo, CPU) per bucket cap, the counterpart of
# `mpirun -np R <trainer> -B B --bucket-cap-mb CAPS` (gpt_ddp_torch.py's docstring says how it is
# run and what it prints; resnet_ddp_torch.py is the same harness on ResNet). A peer module supplies
# its model and step (:class:`DDPPeer`); everything else is here.

DDP_WARMUP_ROUNDS = 2  # rounds of cases excluded: DDP's first step reduces one bucket, the second rebuilds them
NO_SYNC = "no_sync"
HUGE_MIB = float(2**40)  # 'all': larger than any model


@dataclass
class Workload:
    """One rank's model and step, built by the peer in the worker (after init_process_group)."""
    model: Any                        # torch.nn.Module, in training mode
    checkpoint_format: str            # the trainer's --save-init format (--init)
    batch: Callable[[Any], tuple]     # torch.Generator -> (inputs, targets) of one step (drawn untimed)
    loss: Callable[[Any, Any], Any]   # (model output, targets) -> scalar loss
    optimizer: Any                    # torch.optim.Optimizer over model's parameters
    grad_clip: float = 0.0            # clip the global gradient norm to this before the step (0: off)


@dataclass(frozen=True)
class DDPPeer:
    """What one data-parallel peer module adds to the shared harness (:func:`ddp_main`)."""
    prog: str                                   # name in messages, e.g. "gpt_ddp_torch"
    module: str                                 # its name: every worker is started as python -m module
    presets: dict                               # model name -> preset (--model's choices)
    default_model: str
    default_batch: int
    default_caps: str
    unit: str                                   # what a row of a batch holds, for the rate: "tokens", "images"
    units_per_row: Callable[[str], int]         # model name -> units in one row (GPT: its sequence length)
    describe: Callable[[str], dict]             # model name -> fields added to every JSON line
    workload: Callable[[argparse.Namespace], Workload]


def parse_caps(text: str, prog: str) -> list[str]:
    """The trainers' cap labels: MiB numbers, 'tensor' (every tensor its own bucket) or 'all'."""
    caps = []
    for c in text.split(","):
        c = c.strip()
        if c in ("tensor", "all"):
            caps.append(c)
            continue
        try:
            v = float(c)
        except ValueError:
            raise SystemExit(f"{prog}: error: bad cap '{c}' (MiB number, 'tensor' or 'all')")
        if v <= 0:
            raise SystemExit(f"{prog}: error: cap must be > 0 MiB, got '{c}'")
        caps.append(c)
    if not caps or len(set(caps)) != len(caps):
        raise SystemExit(f"{prog}: error: caps must be distinct and non-empty: '{text}'")
    return caps


def cap_mib(cap: str) -> float:
    return {"tensor": 0.0, "all": HUGE_MIB}[cap] if cap in ("tensor", "all") else float(cap)


def parse_cpu_sets(text: str, prog: str) -> list[set[int]]:
    """'0;1;2' or '0,8;1,9' (one CPU list per rank, ranges a-b allowed) -> [{0}, {1}, ...]."""
    sets = []
    for part in text.split(";"):
        cpus: set[int] = set()
        for item in part.split(","):
            lo, _, hi = item.strip().partition("-")
            try:
                cpus.update(range(int(lo), int(hi or lo) + 1))
            except ValueError:
                raise SystemExit(f"{prog}: error: bad --cpu-sets '{text}' (per rank a CPU list, ';' between ranks)")
        sets.append(cpus)
    return sets


def _ddp_worker(peer: DDPPeer, a: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    rank, world = a.rank, a.ranks
    bind_threads(a.threads)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    w = peer.workload(a)
    model = w.model
    if a.init:  # the trainer's --save-init weights (every rank; DDP then broadcasts rank 0's anyway)
        start_from_trainer_weights(model, a.init, w.checkpoint_format)
    model.train()

    caps = parse_caps(a.caps, peer.prog)
    comm_log = []  # (t_ready, t_done) of every bucket of the current step

    def timed_allreduce(state, bucket):  # DDP's default allreduce_hook, plus timestamps
        t_ready = time.perf_counter()
        tensor = bucket.buffer()
        tensor.div_(world)
        fut = dist.all_reduce(tensor, async_op=True).get_future()

        def done(f):
            comm_log.append((t_ready, time.perf_counter()))
            return f.value()[0]
        return fut.then(done)

    wrappers = {}
    for cap in caps:
        # DDP's first bucket is 1 MiB (dist._DEFAULT_FIRST_BUCKET_BYTES, read when the wrapper is
        # built), as the trainers' numeric caps; 'tensor' and 'all' have no small first bucket there.
        first = {"tensor": 0, "all": int(HUGE_MIB * 2**20)}.get(cap, 2**20)
        had = hasattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES")
        saved = getattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES", None)
        dist._DEFAULT_FIRST_BUCKET_BYTES = first
        try:
            # broadcast_buffers=False: a model's buffers (ResNet's BN running statistics) stay each
            # rank's own during training, as in resnet_train (shared only for validation and saving)
            ddp = DDP(model, bucket_cap_mb=cap_mib(cap), gradient_as_bucket_view=True, broadcast_buffers=False)
        finally:
            if had:
                dist._DEFAULT_FIRST_BUCKET_BYTES = saved
            else:
                del dist._DEFAULT_FIRST_BUCKET_BYTES
        if a.comm_timing:
            ddp.register_comm_hook(None, timed_allreduce)
        wrappers[cap] = ddp
    cases = list(caps) if a.no_baseline else caps + [NO_SYNC]

    gen = torch.Generator().manual_seed(1000 + rank)
    total = len(cases) * (DDP_WARMUP_ROUNDS + a.steps)
    rows = []
    for step in range(total):
        case = cases[step % len(cases)]
        ddp = wrappers[caps[0]] if case == NO_SYNC else wrappers[case]
        x, y = w.batch(gen)
        comm_log.clear()
        ctx = ddp.no_sync() if case == NO_SYNC else _NullContext()
        c0 = time.process_time()
        t0 = time.perf_counter()
        with ctx:
            loss = w.loss(ddp(x), y)
            t1 = time.perf_counter()
            w.optimizer.zero_grad(set_to_none=False)
            loss.backward()
            t2 = time.perf_counter()
        if w.grad_clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), w.grad_clip)
        w.optimizer.step()
        t3 = time.perf_counter()
        c1 = time.process_time()
        row = {"rank": rank, "step": step, "case": case, "in_summary": int(step >= DDP_WARMUP_ROUNDS * len(cases)),
               "forward_s": t1 - t0, "backward_s": t2 - t1, "optimizer_s": t3 - t2, "step_s": t3 - t0,
               "process_cpu_s": c1 - c0, "loss": float(loss)}
        if a.comm_timing and case != NO_SYNC:
            log = sorted(comm_log)
            busy, end = 0.0, -1e300
            for s, e in log:  # union of the intervals
                s = max(s, end)
                if e > s:
                    busy += e - s
                end = max(end, e)
            last_ready = max((s for s, _ in log), default=t2)
            row.update(comm_s=busy, exposed_comm_s=max(0.0, t2 - last_ready), hook_buckets=len(log))
        rows.append(row)

    buckets = {}
    for cap, ddp in wrappers.items():
        try:
            info = ddp._get_ddp_logging_data()
            sizes = info.get("rebuilt_bucket_sizes") or info.get("bucket_sizes") or ""
            buckets[cap] = len([s for s in str(sizes).split(",") if s.strip()])
        except (AttributeError, RuntimeError):  # a private API: another torch may lack it
            buckets[cap] = -1
    with open(a.result, "w") as f:
        json.dump({"rank": rank, "rows": rows, "buckets": buckets, "torch": torch.__version__,
                   "torch_threads": torch.get_num_threads(), "cpus": sorted(os.sched_getaffinity(0))}, f)
    dist.barrier()
    dist.destroy_process_group()


class _NullContext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ddp_launch(peer: DDPPeer, a: argparse.Namespace, tmp: str) -> list[dict]:
    """Starts a.ranks workers (this module again, with --worker-rank), each pinned to its --cpu-sets
    entry from its first instruction; polls them, and stops them all as soon as one fails."""
    port = _free_port()
    cpu_sets = parse_cpu_sets(a.cpu_sets, peer.prog) if a.cpu_sets else None
    if cpu_sets is not None and len(cpu_sets) < a.ranks:
        raise SystemExit(f"{peer.prog}: error: --cpu-sets has {len(cpu_sets)} entries for {a.ranks} ranks")
    procs = []
    for r in range(a.ranks):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r),
                   WORLD_SIZE=str(a.ranks), OMP_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS=str(a.threads))
        cmd = [sys.executable, "-m", peer.module, *a.argv, "--worker-rank", str(r), "--result",
               os.path.join(tmp, f"rank{r}.json")]
        pin = (lambda cpus=cpu_sets[r]: os.sched_setaffinity(0, cpus)) if cpu_sets else None
        log = open(os.path.join(tmp, f"rank{r}.log"), "w+")
        procs.append((subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, preexec_fn=pin), log))
    # Poll them all: a rank that dies leaves its peers blocked in gloo, so stop the rest at once.
    deadline = time.monotonic() + a.timeout
    failed = None
    while failed is None and any(p.poll() is None for p, _ in procs):
        for r, (p, log) in enumerate(procs):
            if p.poll() not in (None, 0):
                log.seek(0)
                failed = f"rank {r} exited {p.returncode}:\n{log.read()[-3000:]}"
                break
        else:
            if time.monotonic() > deadline:
                failed = f"timed out after {a.timeout:.0f} s"
            else:
                time.sleep(0.05)
    if failed is None:
        bad = [(r, p, log) for r, (p, log) in enumerate(procs) if p.returncode != 0]
        if bad:
            r, p, log = bad[0]
            log.seek(0)
            failed = f"rank {r} exited {p.returncode}:\n{log.read()[-3000:]}"
    for p, log in procs:  # only our own children
        if p.poll() is None:
            p.kill()
            p.wait()
        log.close()
    if failed:
        raise SystemExit(f"{peer.prog}: error: {failed}")
    results = []
    for r in range(a.ranks):
        with open(os.path.join(tmp, f"rank{r}.json")) as f:
            results.append(json.load(f))
    return results


def _mean(xs):
    return statistics.mean(xs) if xs else float("nan")


def slowest_per_step(rows: list[dict]) -> list[float]:
    """Per step (in step order), the slowest rank's step time: the data-parallel step's duration."""
    slowest: dict[int, float] = {}
    for r in rows:
        slowest[r["step"]] = max(slowest.get(r["step"], 0.0), r["step_s"])
    return [slowest[k] for k in sorted(slowest)]


def _ddp_summarise(peer: DDPPeer, a: argparse.Namespace, results: list[dict]) -> list[dict]:
    units_per_step = a.ranks * a.batch * peer.units_per_row(a.model)
    rows = [row for res in results for row in res["rows"] if row["in_summary"]]

    def by_case(case):
        return [r for r in rows if r["case"] == case]

    base = by_case(NO_SYNC)
    base_step = _mean([r["step_s"] for r in base])
    base_it = slowest_per_step(base)
    lines = []
    for cap in parse_caps(a.caps, peer.prog):
        rs = by_case(cap)
        it = slowest_per_step(rs)
        step_mean = _mean([r["step_s"] for r in rs])
        it_mean = _mean(it)
        out = {"impl": "torch-ddp-gloo", "torch": results[0]["torch"], "model": a.model, "cap": cap,
               "bucket_cap_mb": cap_mib(cap), "buckets": results[0]["buckets"][cap], "ranks": a.ranks,
               "threads": a.threads, "torch_threads": results[0]["torch_threads"], "batch": a.batch,
               **peer.describe(a.model), "steps": len(it), "iteration_mean_s": it_mean,
               "iteration_median_s": statistics.median(it), "iteration_min_s": min(it),
               "forward_mean_s": _mean([r["forward_s"] for r in rs]),
               "backward_mean_s": _mean([r["backward_s"] for r in rs]),
               "optimizer_mean_s": _mean([r["optimizer_s"] for r in rs]),
               "step_mean_s": step_mean, "cpu_mean_s": _mean([r["process_cpu_s"] for r in rs]),
               "compute_est_s": base_step if base else float("nan"),
               "exposed_comm_est_s": step_mean - base_step if base else float("nan"),
               # the no_sync case measured like the cap: the slowest rank's step, over the same ranks
               "baseline_iteration_mean_s": _mean(base_it),
               "baseline_iteration_median_s": statistics.median(base_it) if base_it else float("nan"),
               f"{peer.unit}_per_s": units_per_step / it_mean,
               "gradient_as_bucket_view": True, "cpus": [res.get("cpus") for res in results]}
        if a.comm_timing:
            out.update(comm_mean_s=_mean([r["comm_s"] for r in rs]),
                       exposed_comm_mean_s=_mean([r["exposed_comm_s"] for r in rs]))
        lines.append(out)
    return lines


def ddp_main(peer: DDPPeer, argv: list[str] | None = None) -> None:
    """The command line of a data-parallel peer: launcher (prints one JSON line per cap) or worker."""
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(prog=peer.prog, description=f"PyTorch DDP (gloo, CPU) peer, {peer.unit} per step")
    ap.add_argument("--model", default=peer.default_model, choices=sorted(peer.presets))
    ap.add_argument("--batch", type=int, default=peer.default_batch, help="rows (samples) per rank per step")
    ap.add_argument("--steps", type=int, default=12, help="summarised steps per cap (and for no_sync)")
    ap.add_argument("--caps", default=peer.default_caps, help="bucket caps in MiB, 'tensor' or 'all', comma-separated")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1, help="threads per rank")
    ap.add_argument("--cpu-sets", help="pin rank r to the r-th CPU list, e.g. '0;1;2;3' (what mpirun --bind-to core "
                    "gives the trainer's ranks); default: unpinned")
    ap.add_argument("--comm-timing", action="store_true",
                    help="allreduce through a timing Python comm hook: measured comm and exposed comm")
    ap.add_argument("--no-baseline", action="store_true", help="skip the no_sync case (no exposed estimate)")
    ap.add_argument("--raw", help="write every rank's per-step rows (JSON) here")
    ap.add_argument("--init", help="the trainer's --save-init checkpoint every rank starts from (needs h5py)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds before the ranks are killed")
    ap.add_argument("--worker-rank", dest="rank", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.argv = argv
    parse_caps(a.caps, peer.prog)
    if a.ranks < 1 or a.threads < 1 or a.batch < 1 or a.steps < 1:
        ap.error("--ranks, --threads, --batch and --steps must be >= 1")
    if a.rank is not None:
        _ddp_worker(peer, a)
        return
    with tempfile.TemporaryDirectory(prefix="ddp_torch.") as tmp:
        results = _ddp_launch(peer, a, tmp)
    if a.raw:
        with open(a.raw, "w") as f:
            json.dump({"args": {k: v for k, v in vars(a).items() if k != "argv"}, "ranks": results}, f)
    for line in _ddp_summarise(peer, a, results):
        print(json.dumps(line), flush=True)
