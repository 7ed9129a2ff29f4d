"""Times training steps of the same GPT-2 in PyTorch on the CPU, for scripts/bench-peers.

    OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=N PYTHONPATH=python /usr/bin/python3 -m scaleprobe_peers.gpt_torch \
        --threads N [--model gpt-tiny] [--batch 8] [--steps 14] [--init CHECKPOINT]

A step is what gpt_train times: forward + mean cross-entropy, zero_grad + backward, global-norm
clipping (1.0) + AdamW (lr 1e-3, betas 0.9/0.95, wd 0.1 on 2-D tensors). --init loads gpt_train's
--save-init checkpoint, so both start from the same weights (without it: PyTorch's own
initialisation, a first loss near 170 instead of ln V). Inputs are random tokens (timing only).
Prints one JSON line (torch_peer.py): the peer's identity, wall and process-CPU time per step over
all steps but the warm-up, the median, the first loss, tokens/s from the median.
"""
import torch
from torch.nn import functional as F

from .gpt_model import GPT  # the same module definition as the checkpoint check
from .torch_peer import bind_threads, peer_arguments, report, start_from_trainer_weights, time_steps

PRESETS = {
    "gpt-micro": dict(vocab_size=128, max_seq_len=16, channels=32, num_layers=2, num_heads=4),
    "gpt-tiny": dict(vocab_size=256, max_seq_len=128, channels=256, num_layers=4, num_heads=4),
    "gpt-mini": dict(vocab_size=256, max_seq_len=256, channels=384, num_layers=6, num_heads=6),
}


def main():
    a = peer_arguments("gpt_train", PRESETS, default_model="gpt-tiny", default_batch=8)
    bind_threads(a.threads)
    torch.manual_seed(0)
    cfg = PRESETS[a.model]
    B, T, V = a.batch, cfg["max_seq_len"], cfg["vocab_size"]
    model = GPT(**cfg)
    logit_diff = start_from_trainer_weights(model, a.init, "scaleprobe-gpt-checkpoint") if a.init else None
    model.train()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    gen = torch.Generator().manual_seed(0)

    def step():
        x = torch.randint(0, V, (B, T), generator=gen)
        y = torch.randint(0, V, (B, T), generator=gen)
        loss = F.cross_entropy(model(x).view(-1, V), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.detach()

    r = time_steps(step, a.steps, profile=a.profile)
    report(a, r, logit_diff, tokens_per_s=B * T / r["wall_median_s"])


if __name__ == "__main__":
    main()
