#!/usr/bin/python3
"""Times training steps of the same GPT-2 in PyTorch on the CPU, for bench_vs_torch.sh.

    OMP_NUM_THREADS=N /usr/bin/python3 trainers/gpt/bench_torch.py --threads N [--model gpt-tiny]
        [--batch 8] [--steps 8]

A step is what gpt_train times: forward + mean cross-entropy, zero_grad + backward, global-norm
clipping (1.0) + AdamW (lr 1e-3, betas 0.9/0.95, wd 0.1 on 2-D tensors). Inputs are random
tokens (timing only). Prints one JSON line: wall and process-CPU seconds per step, mean and
median over all steps but the first (excluded like gpt_train's summary), and tokens/s.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
from torch.nn import functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load_checkpoint import GPT  # noqa: E402  (the same module definition as the checkpoint check)

PRESETS = {
    "gpt-micro": dict(vocab_size=128, max_seq_len=16, channels=32, num_layers=2, num_heads=4),
    "gpt-tiny": dict(vocab_size=256, max_seq_len=128, channels=256, num_layers=4, num_heads=4),
    "gpt-mini": dict(vocab_size=256, max_seq_len=256, channels=384, num_layers=6, num_heads=6),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt-tiny", choices=sorted(PRESETS))
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=8)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    cfg = PRESETS[a.model]
    B, T, V = a.batch, cfg["max_seq_len"], cfg["vocab_size"]
    model = GPT(**cfg)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    walls, cpus = [], []
    for _ in range(a.steps):
        x = torch.randint(0, V, (B, T))
        y = torch.randint(0, V, (B, T))
        w0, c0 = time.perf_counter(), time.process_time()
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, V), y.view(-1))
        opt.zero_grad(set_to_none=False)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    w, c = walls[1:], cpus[1:]
    print(json.dumps({"impl": "torch " + torch.__version__, "threads": a.threads, "torch_threads": torch.get_num_threads(),
                      "steps": len(w), "wall_mean_s": statistics.mean(w), "wall_median_s": statistics.median(w),
                      "cpu_mean_s": statistics.mean(c), "tokens_per_s": B * T * len(w) / sum(w)}))


if __name__ == "__main__":
    main()
