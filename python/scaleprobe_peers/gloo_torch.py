"""PyTorch's Gloo allreduce (torch.distributed, backend gloo) timed per call: the peer of
allreduce_perf's `gloo` algorithm (scripts/bench-peers --only gloo). Same sizes and iteration
counts as allreduce_perf's defaults, f32 sum, in place, one thread, ranks spawned by hand (Debian's
torch 1.13 cannot use torch.distributed.run on Python 3.11), unbound. Writes one JSON line per size
(rank 0): bytes, iters, t_mean_us (mean over ranks of each rank's mean call time, as allreduce_perf's
t_mean), p50_us (median over calls of the slowest rank's time), t_max_mean_us, cpu_over_wall.
Usage: PYTHONPATH=python /usr/bin/python3 -m scaleprobe_peers.gloo_torch RANKS SIZES OUT (SIZES: comma list of
byte counts)"""
import json
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def iterations(nbytes: int) -> int:
    # allreduce_perf's default: about 256 MiB of traffic, 10-1000 iterations.
    return max(10, min(1000, (256 << 20) // max(nbytes, 1)))


def worker(rank: int, nranks: int, port: int, sizes: list[int], out: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=nranks)
    rows = []
    for nbytes in sizes:
        n = nbytes // 4
        x = torch.ones(n, dtype=torch.float32)
        iters = iterations(nbytes)
        warm = max(1, iters // 10)
        for _ in range(warm):
            dist.all_reduce(x)
        times = []
        cpu0 = time.thread_time()
        for _ in range(iters):
            t0 = time.perf_counter()
            dist.all_reduce(x)
            times.append(time.perf_counter() - t0)
        cpu = time.thread_time() - cpu0
        # per-iteration slowest rank, as allreduce_perf's p50
        t = torch.tensor(times, dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        mean = torch.tensor([sum(times) / iters], dtype=torch.float64)
        slowest = mean.clone()
        dist.all_reduce(mean)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        rows.append({"bytes": nbytes, "iters": iters, "t_mean_us": mean.item() / nranks * 1e6,
                     "p50_us": statistics.median(t.tolist()) * 1e6, "t_max_mean_us": slowest.item() * 1e6,
                     "cpu_over_wall": cpu / sum(times)})
    if rank == 0:
        with open(out, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    dist.destroy_process_group()


def main() -> None:
    nranks = int(sys.argv[1])
    sizes = [int(s) for s in sys.argv[2].split(",")]
    out = sys.argv[3]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(worker, args=(nranks, port, sizes, out), nprocs=nranks, join=True)


if __name__ == "__main__":
    main()
