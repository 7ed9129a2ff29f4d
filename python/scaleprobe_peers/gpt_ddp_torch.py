"""Times data-parallel training steps of the same GPT-2 under PyTorch DDP (gloo, CPU), per bucket cap.

    PYTHONPATH=python /usr/bin/python3 -m scaleprobe_peers.gpt_ddp_torch [--model gpt-tiny] [--batch 8]
        [--steps 12] [--caps 1,5,25,100] [--ranks 2] [--threads 1] [--cpu-sets '0;1'] [--comm-timing]
        [--raw FILE]

The PyTorch counterpart of `mpirun -np R gpt_train -B B --bucket-cap-mb CAPS` (used by
scripts/bench-peers). The harness is ddp_peer.py's ddp_main (resnet_ddp_torch.py is the same on
ResNet); this module gives it the model and the step. This process only launches and summarises:
it starts R worker processes of itself (python -m; no torch.distributed.run: Debian's torch 1.13
launcher fails under Python 3.11), each pinned
to its --cpu-sets entry when given (bench-peers passes the CPUs `mpirun --bind-to core` gives the
trainer's ranks, so both sides have the same binding), that rendezvous over env:// on 127.0.0.1
and a free port, init_process_group("gloo"), set OMP_NUM_THREADS /
torch.set_num_threads(--threads) with one inter-op thread and build the model (gpt_model.GPT,
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
waiting for the slower rank. `compute_est` is the no_sync case's mean step time;
`baseline_iteration_median_s` is the no_sync case measured like the caps (the slowest rank's step,
median over steps): the same-load no-communication baseline of bench-peers' scaling rows. With
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
baseline_iteration_mean_s / baseline_iteration_median_s (NaN with --no-baseline), tokens_per_s
(global tokens per step / iteration_mean_s), cpus (each rank's CPUs), and with --comm-timing
comm_mean_s, exposed_comm_mean_s. --raw FILE writes every rank's per-step rows.
"""
from .ddp_peer import DDPPeer, Workload, ddp_main

PRESETS = {  # as gpt_torch.py and gpt_train's presets
    "gpt-micro": dict(vocab_size=128, max_seq_len=16, channels=32, num_layers=2, num_heads=4),
    "gpt-tiny": dict(vocab_size=256, max_seq_len=128, channels=256, num_layers=4, num_heads=4),
    "gpt-mini": dict(vocab_size=256, max_seq_len=256, channels=384, num_layers=6, num_heads=6),
}


def workload(a):
    """gpt_train's step on one rank: the model, random token batches, cross-entropy, AdamW, clip 1.0."""
    import torch
    from torch.nn import functional as F

    from .gpt_model import GPT  # the same module definition as gpt_torch.py

    cfg = PRESETS[a.model]
    B, T, V = a.batch, cfg["max_seq_len"], cfg["vocab_size"]
    model = GPT(**cfg)
    assert not list(model.buffers()), "the model has buffers; gloo broadcast of them is not set up"
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    return Workload(model=model, checkpoint_format="scaleprobe-gpt-checkpoint",
                    batch=lambda gen: (torch.randint(0, V, (B, T), generator=gen),
                                       torch.randint(0, V, (B, T), generator=gen)),
                    loss=lambda logits, y: F.cross_entropy(logits.view(-1, V), y.view(-1)),
                    optimizer=opt, grad_clip=1.0)


PEER = DDPPeer(prog="gpt_ddp_torch", module="scaleprobe_peers.gpt_ddp_torch", presets=PRESETS,
               default_model="gpt-tiny", default_batch=8, default_caps="1,5,25,100", unit="tokens",
               units_per_row=lambda model: PRESETS[model]["max_seq_len"],
               describe=lambda model: {"seq_len": PRESETS[model]["max_seq_len"]}, workload=workload)

if __name__ == "__main__":
    ddp_main(PEER)
