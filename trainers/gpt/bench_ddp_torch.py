#!/usr/bin/python3
"""Times data-parallel training steps of the same GPT-2 under PyTorch DDP (gloo, CPU), per bucket cap.

    /usr/bin/python3 trainers/gpt/bench_ddp_torch.py [--model gpt-tiny] [--batch 8] [--steps 12]
        [--caps 1,5,25,100] [--ranks 2] [--threads 1] [--comm-timing] [--raw FILE]

The PyTorch counterpart of `mpirun -np R gpt_train -B B --bucket-cap-mb CAPS` (used by
bench_ddp_vs_torch.sh). This process only launches and summarises: it starts R worker
processes of itself (no torch.distributed.run: Debian's torch 1.13 launcher fails under Python
3.11) that rendezvous over env:// on 127.0.0.1 and a free port, init_process_group("gloo"), set
OMP_NUM_THREADS / torch.set_num_threads(--threads) and build the model (load_checkpoint.GPT,
the module the checkpoint check uses; the same seed on every rank, and DDP broadcasts rank 0's
parameters anyway). Every rank then wraps the ONE module in one DistributedDataParallel per cap
(bucket_cap_mb=cap, gradient_as_bucket_view=True, broadcast_buffers=False: the model has no
buffers) and cycles the steps ROUND ROBIN over the cases like gpt_train: cap 1, cap 2, ...,
then a "no_sync" case (the same step under the first wrapper's no_sync(): no gradient
communication at all, the compute-only reference), then cap 1 again. A DDP wrapper only
reacts to a backward whose forward went through it, so the idle wrappers cost nothing; with
gradient_as_bucket_view each synchronising step first copies the gradients the previous
wrapper left in its own buckets into the current wrapper's (one copy of the gradients, as
DDP without bucket views does every step).

A step is gpt_train's: forward + mean cross-entropy | zero_grad + backward | clip 1.0 + AdamW
(lr 1e-3, betas 0.9/0.95, wd 0.1 on 2-D tensors). DDP allreduces each finished bucket while
backward goes on and waits for the rest before backward returns, so `backward` here is
gpt_train's backward + wait. The exposed communication is therefore only ESTIMATED:
    exposed_est = mean step time of the cap - mean step time of the no_sync case
(means over ranks and summarised steps), which also contains DDP's bucket copies and any time
waiting for the slower rank. `compute_est` is the no_sync case's mean step time. With
--comm-timing the allreduce goes through a Python comm hook (the same arithmetic as DDP's
default allreduce hook: divide by the world size, allreduce, async) that records when each
bucket was ready (hook called) and when its allreduce finished; then also
    comm     = union of the buckets' [ready, done] intervals (communication busy time),
    exposed  = end of backward - readiness of the last bucket (backward's wait, gpt_train's wait_s).
(No overlap or hidden fraction: that needs the same buckets' no-overlap allreduce time, which
gpt_train measures in its run and this script does not.)
The Python hook and its GIL hand-offs cost time of their own; compare like with like.

The first two rounds of cases are excluded (the first step of a DDP wrapper reduces everything
in one bucket, the second rebuilds the buckets in gradient-ready order); gpt_train excludes
its first round. Inputs are random tokens drawn outside the timed region (timing only).

Prints one JSON line per cap: cap, bucket_cap_mb, buckets, ranks, threads, batch (rows per
rank), steps (summarised), iteration_mean_s / iteration_median_s / iteration_min_s (over steps
of the SLOWEST rank's step time), forward/backward/optimizer/step means (over ranks and
steps), cpu_mean_s (process CPU per step, all threads), compute_est_s, exposed_comm_est_s,
tokens_per_s (global tokens per step / iteration_mean_s), and with --comm-timing
comm_mean_s, exposed_comm_mean_s. --raw FILE writes every rank's per-step rows.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

PRESETS = {  # as bench_torch.py and gpt_train's presets
    "gpt-micro": dict(vocab_size=128, max_seq_len=16, channels=32, num_layers=2, num_heads=4),
    "gpt-tiny": dict(vocab_size=256, max_seq_len=128, channels=256, num_layers=4, num_heads=4),
    "gpt-mini": dict(vocab_size=256, max_seq_len=256, channels=384, num_layers=6, num_heads=6),
}
WARMUP_ROUNDS = 2
NO_SYNC = "no_sync"
HUGE_MIB = float(2**40)  # 'all': larger than any model


def parse_caps(text):
    """gpt_train's cap labels: MiB numbers, 'tensor' (every tensor its own bucket) or 'all'."""
    caps = []
    for c in text.split(","):
        c = c.strip()
        if c in ("tensor", "all"):
            caps.append(c)
            continue
        try:
            v = float(c)
        except ValueError:
            raise SystemExit(f"bench_ddp_torch.py: error: bad cap '{c}' (MiB number, 'tensor' or 'all')")
        if v <= 0:
            raise SystemExit(f"bench_ddp_torch.py: error: cap must be > 0 MiB, got '{c}'")
        caps.append(c)
    if not caps or len(set(caps)) != len(caps):
        raise SystemExit(f"bench_ddp_torch.py: error: caps must be distinct and non-empty: '{text}'")
    return caps


def cap_mib(cap):
    return {"tensor": 0.0, "all": HUGE_MIB}[cap] if cap in ("tensor", "all") else float(cap)


# --------------------------------------------------------------------------------------- worker


def worker(a):
    import torch
    import torch.distributed as dist
    from torch.nn import functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    sys.path.insert(0, HERE)
    from load_checkpoint import GPT  # the same module definition as bench_torch.py

    rank, world = a.rank, a.ranks
    torch.set_num_threads(a.threads)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    cfg = PRESETS[a.model]
    B, T, V = a.batch, cfg["max_seq_len"], cfg["vocab_size"]
    model = GPT(**cfg)
    if a.init:  # gpt_train's --save-init weights (every rank; DDP then broadcasts rank 0's anyway)
        sys.path.insert(0, os.path.join(HERE, "..", "common"))
        from torch_peer import start_from_trainer_weights
        start_from_trainer_weights(model, a.init, "scaleprobe-gpt-checkpoint")
        model.train()
    assert not list(model.buffers()), "the model has buffers; gloo broadcast of them is not set up"

    caps = parse_caps(a.caps)
    comm_log = []  # (t_ready, t_done) of every bucket of the current step
    world_size = world

    def timed_allreduce(state, bucket):  # DDP's default allreduce_hook, plus timestamps
        t_ready = time.perf_counter()
        tensor = bucket.buffer()
        tensor.div_(world_size)
        fut = dist.all_reduce(tensor, async_op=True).get_future()

        def done(f):
            comm_log.append((t_ready, time.perf_counter()))
            return f.value()[0]
        return fut.then(done)

    wrappers = {}
    for cap in caps:
        # DDP's first bucket is 1 MiB (dist._DEFAULT_FIRST_BUCKET_BYTES, read when the wrapper is
        # built), as gpt_train's numeric caps; 'tensor' and 'all' have no small first bucket there.
        first = {"tensor": 0, "all": int(HUGE_MIB * 2**20)}.get(cap, 2**20)
        saved, dist._DEFAULT_FIRST_BUCKET_BYTES = dist._DEFAULT_FIRST_BUCKET_BYTES, first
        try:
            ddp = DDP(model, bucket_cap_mb=cap_mib(cap), gradient_as_bucket_view=True,
                      broadcast_buffers=False)
        finally:
            dist._DEFAULT_FIRST_BUCKET_BYTES = saved
        if a.comm_timing:
            ddp.register_comm_hook(None, timed_allreduce)
        wrappers[cap] = ddp
    cases = caps + [NO_SYNC] if not a.no_baseline else list(caps)

    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    gen = torch.Generator().manual_seed(1000 + rank)
    total = len(cases) * (WARMUP_ROUNDS + a.steps)
    rows = []
    for step in range(total):
        case = cases[step % len(cases)]
        ddp = wrappers[caps[0]] if case == NO_SYNC else wrappers[case]
        x = torch.randint(0, V, (B, T), generator=gen)
        y = torch.randint(0, V, (B, T), generator=gen)
        comm_log.clear()
        ctx = ddp.no_sync() if case == NO_SYNC else _nullcontext()
        c0 = time.process_time()
        t0 = time.perf_counter()
        with ctx:
            logits = ddp(x)
            loss = F.cross_entropy(logits.view(-1, V), y.view(-1))
            t1 = time.perf_counter()
            opt.zero_grad(set_to_none=False)
            loss.backward()
            t2 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        t3 = time.perf_counter()
        c1 = time.process_time()
        row = {"rank": rank, "step": step, "case": case, "in_summary": int(step >= WARMUP_ROUNDS * len(cases)),
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
        info = ddp._get_ddp_logging_data()
        sizes = info.get("rebuilt_bucket_sizes") or info.get("bucket_sizes") or ""
        buckets[cap] = len([s for s in str(sizes).split(",") if s.strip()])
    with open(a.result, "w") as f:
        json.dump({"rank": rank, "rows": rows, "buckets": buckets, "torch": torch.__version__,
                   "torch_threads": torch.get_num_threads()}, f)
    dist.barrier()
    dist.destroy_process_group()


class _nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


# --------------------------------------------------------------------------------------- launcher


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(a, tmp):
    port = free_port()
    procs = []
    for r in range(a.ranks):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r),
                   WORLD_SIZE=str(a.ranks), OMP_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS=str(a.threads))
        cmd = [sys.executable, os.path.abspath(__file__), "--worker-rank", str(r), "--result",
               os.path.join(tmp, f"rank{r}.json"), "--model", a.model, "--batch", str(a.batch),
               "--steps", str(a.steps), "--caps", a.caps, "--ranks", str(a.ranks), "--threads", str(a.threads)]
        if a.comm_timing:
            cmd.append("--comm-timing")
        if a.no_baseline:
            cmd.append("--no-baseline")
        if a.init:
            cmd += ["--init", a.init]
        log = open(os.path.join(tmp, f"rank{r}.log"), "w+")
        procs.append((subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT), log))
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
        raise SystemExit(f"bench_ddp_torch.py: error: {failed}")
    results = []
    for r in range(a.ranks):
        with open(os.path.join(tmp, f"rank{r}.json")) as f:
            results.append(json.load(f))
    return results


def mean(xs):
    return statistics.mean(xs) if xs else float("nan")


def summarise(a, results):
    cfg = PRESETS[a.model]
    tokens_per_step = a.ranks * a.batch * cfg["max_seq_len"]
    rows = [row for res in results for row in res["rows"] if row["in_summary"]]

    def by_case(case):
        return [r for r in rows if r["case"] == case]

    base = by_case(NO_SYNC)
    base_step = mean([r["step_s"] for r in base])
    lines = []
    for cap in parse_caps(a.caps):
        rs = by_case(cap)
        slowest = {}
        for r in rs:
            slowest[r["step"]] = max(slowest.get(r["step"], 0.0), r["step_s"])
        it = list(slowest.values())
        step_mean = mean([r["step_s"] for r in rs])
        it_mean = mean(it)
        out = {"impl": "torch-ddp-gloo", "torch": results[0]["torch"], "model": a.model, "cap": cap,
               "bucket_cap_mb": cap_mib(cap),
               "buckets": results[0]["buckets"][cap], "ranks": a.ranks, "threads": a.threads,
               "torch_threads": results[0]["torch_threads"], "batch": a.batch, "seq_len": cfg["max_seq_len"],
               "steps": len(it), "iteration_mean_s": it_mean, "iteration_median_s": statistics.median(it),
               "iteration_min_s": min(it),
               "forward_mean_s": mean([r["forward_s"] for r in rs]),
               "backward_mean_s": mean([r["backward_s"] for r in rs]),
               "optimizer_mean_s": mean([r["optimizer_s"] for r in rs]),
               "step_mean_s": step_mean, "cpu_mean_s": mean([r["process_cpu_s"] for r in rs]),
               "compute_est_s": base_step if base else float("nan"),
               "exposed_comm_est_s": step_mean - base_step if base else float("nan"),
               "tokens_per_s": tokens_per_step / it_mean,
               "gradient_as_bucket_view": True}
        if a.comm_timing:
            comm = mean([r["comm_s"] for r in rs])
            exposed = mean([r["exposed_comm_s"] for r in rs])
            out.update(comm_mean_s=comm, exposed_comm_mean_s=exposed)
        lines.append(out)
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="gpt-tiny", choices=sorted(PRESETS))
    ap.add_argument("--batch", type=int, default=8, help="sequences per rank per step")
    ap.add_argument("--steps", type=int, default=12, help="summarised steps per cap (and for no_sync)")
    ap.add_argument("--caps", default="1,5,25,100", help="bucket caps in MiB, 'tensor' or 'all', comma-separated")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1, help="threads per rank")
    ap.add_argument("--comm-timing", action="store_true",
                    help="allreduce through a timing Python comm hook: measured comm and exposed comm")
    ap.add_argument("--no-baseline", action="store_true", help="skip the no_sync case (no exposed estimate)")
    ap.add_argument("--raw", help="write every rank's per-step rows (JSON) here")
    ap.add_argument("--init", help="gpt_train --save-init checkpoint every rank starts from")
    ap.add_argument("--timeout", type=float, default=600, help="seconds before the ranks are killed")
    ap.add_argument("--worker-rank", dest="rank", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    a = ap.parse_args()
    parse_caps(a.caps)
    if a.ranks < 1 or a.threads < 1 or a.batch < 1 or a.steps < 1:
        ap.error("--ranks, --threads, --batch and --steps must be >= 1")
    if a.rank is not None:
        worker(a)
        return
    with tempfile.TemporaryDirectory(prefix="bench_ddp_torch.") as tmp:
        results = launch(a, tmp)
    if a.raw:
        with open(a.raw, "w") as f:
            json.dump({"args": vars(a), "ranks": results}, f)
    for line in summarise(a, results):
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
