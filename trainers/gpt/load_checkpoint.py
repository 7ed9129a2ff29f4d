#!/usr/bin/python3
"""Load a gpt_train checkpoint (HDF5) into a small PyTorch GPT-2 and check it.

    /usr/bin/python3 trainers/gpt/load_checkpoint.py CHECKPOINT.h5 [--tol 1e-4]

The checkpoint stores one float32 dataset per parameter under /model, named as in PyTorch's
GPT-2 ("transformer.h.0.attn.c_attn.weight", ...), with Linear weights in nn.Linear layout
[out_features, in_features] (HF's Conv1D-based GPT2Model stores the transpose, [in, out]).
/check holds a fixed input (tokens [1, T]) and the logits the C++ model computed on it; this
script recomputes them with the torch module defined here and exits 1 if any logit differs by
more than tol * max(1, max |logit|). Prints one line either way.
"""
import argparse
import math
import os
import sys

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from scaleprobe_analysis.h5open import open_h5  # noqa: E402 (the one safe open: verified bytes)


class Block(nn.Module):
    def __init__(self, C, NH):
        super().__init__()
        self.NH = NH
        self.ln_1 = nn.LayerNorm(C, eps=1e-5)
        self.attn = nn.Module()
        self.attn.c_attn = nn.Linear(C, 3 * C)
        self.attn.c_proj = nn.Linear(C, C)
        self.ln_2 = nn.LayerNorm(C, eps=1e-5)
        self.mlp = nn.Module()
        self.mlp.c_fc = nn.Linear(C, 4 * C)
        self.mlp.c_proj = nn.Linear(4 * C, C)

    def attention(self, x):
        B, T, C = x.shape
        q, k, v = self.attn.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.NH, C // self.NH).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.NH)
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.attn.c_proj(y)

    def forward(self, x):
        x = x + self.attention(self.ln_1(x))
        return x + self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    """GPT-2 as in trainers/gpt/model.hpp: pre-LayerNorm blocks, tied LM head (or, untied, its own
    lm_head.weight), no dropout."""

    def __init__(self, vocab_size, max_seq_len, channels, num_layers, num_heads, tied_lm_head=1):
        super().__init__()
        self.transformer = nn.Module()
        self.transformer.wte = nn.Embedding(vocab_size, channels)
        self.transformer.wpe = nn.Embedding(max_seq_len, channels)
        self.transformer.h = nn.ModuleList(Block(channels, num_heads) for _ in range(num_layers))
        self.transformer.ln_f = nn.LayerNorm(channels, eps=1e-5)
        self.lm_head = None if tied_lm_head else nn.Linear(channels, vocab_size, bias=False)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(T, device=idx.device))
        for block in self.transformer.h:
            x = block(x)
        head = self.transformer.wte.weight if self.lm_head is None else self.lm_head.weight
        return self.transformer.ln_f(x) @ head.t()


CONFIG_KEYS = ("vocab_size", "max_seq_len", "channels", "num_layers", "num_heads")


def load(path):
    """Returns (model, config dict, (check tokens, check logits)) with every parameter loaded;
    raises on any mismatch. Everything comes from one open of the verified bytes (or, for a
    checkpoint without a digest, from a snapshot read in an isolated child process)."""
    with open_h5(path) as f:
        model, cfg = _load(f)
        return model, cfg, (f["check/tokens"][...], f["check/logits"][...])


def _load(f):
    fmt = f.attrs.get("format")
    if fmt is None or (fmt.decode() if isinstance(fmt, bytes) else fmt) != "scaleprobe-gpt-checkpoint":
        raise ValueError("not a scaleprobe GPT checkpoint")
    cfg = {k: int(f.attrs[k]) for k in CONFIG_KEYS}
    cfg["tied_lm_head"] = int(f.attrs.get("tied_lm_head", 1))  # absent before --untied-head: tied
    model = GPT(**cfg)
    state = model.state_dict()
    stored = set(f["model"].keys())
    if stored != set(state.keys()):
        raise ValueError(f"parameter names differ: file only {sorted(stored - set(state))}, "
                         f"module only {sorted(set(state) - stored)}")
    new_state = {}
    for name, ref in state.items():
        arr = f["model"][name][...]
        if tuple(arr.shape) != tuple(ref.shape):
            raise ValueError(f"{name}: shape {arr.shape} in the file, {tuple(ref.shape)} in the module")
        new_state[name] = torch.from_numpy(arr.astype(np.float32))
    model.load_state_dict(new_state)
    model.eval()
    return model, cfg


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--tol", type=float, default=1e-4, help="relative tolerance on the logits")
    args = ap.parse_args()
    try:
        model, cfg, (tokens, want) = load(args.checkpoint)
        tokens = torch.from_numpy(tokens.astype(np.int64))
    except Exception as e:  # one line, like the C++ tools
        print(f"load_checkpoint.py: error: {args.checkpoint}: {e}", file=sys.stderr)
        return 1
    with torch.no_grad():
        got = model(tokens).numpy()
    scale = max(1.0, float(np.abs(want).max()))
    diff = float(np.abs(got - want).max())
    n = sum(p.numel() for p in model.parameters())
    line = (f"{args.checkpoint}: {n} parameters, V {cfg['vocab_size']} T {cfg['max_seq_len']} C {cfg['channels']} "
            f"L {cfg['num_layers']} NH {cfg['num_heads']}; max |logit diff| {diff:.3e} "
            f"(max |logit| {scale:.3f}, tolerance {args.tol * scale:.3e})")
    if not diff <= args.tol * scale:
        print(f"load_checkpoint.py: error: logits differ: {line}", file=sys.stderr)
        return 1
    print(f"ok: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
