"""gpt_train's GPT-2 (trainers/gpt/model.hpp) as a torch module, named as PyTorch's GPT-2 names its
parameters ("transformer.h.0.attn.c_attn.weight", ...) with Linear weights in nn.Linear layout
[out_features, in_features]: the model of the checkpoint check (gpt_checkpoint.py) and of the
PyTorch peers (gpt_torch.py, gpt_ddp_torch.py)."""
import math

import torch
from torch import nn
from torch.nn import functional as F


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
