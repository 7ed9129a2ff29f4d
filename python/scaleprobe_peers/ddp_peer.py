"""The data-parallel PyTorch peers' harness: DistributedDataParallel (gloo, CPU) per bucket cap, the
counterpart of `mpirun -np R <trainer> -B B --bucket-cap-mb CAPS` (gpt_ddp_torch.py's docstring says
how it is run and what it prints; resnet_ddp_torch.py is the same harness on ResNet). A peer module
supplies its model and step (:class:`DDPPeer`); everything else is here. What every peer shares
(the trainer's initial weights, bound threads) is torch_peer.py's.
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
from typing import Any, Callable

from .torch_peer import bind_threads, start_from_trainer_weights

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
