"""Load a gpt_train checkpoint (HDF5) into a small PyTorch GPT-2 and check it.

    PYTHONPATH=python /usr/bin/python3 -m scaleprobe_peers.gpt_checkpoint CHECKPOINT.h5 [--tol 1e-4]

The checkpoint stores one float32 dataset per parameter under /model, named as in PyTorch's
GPT-2 ("transformer.h.0.attn.c_attn.weight", ...), with Linear weights in nn.Linear layout
[out_features, in_features] (HF's Conv1D-based GPT2Model stores the transpose, [in, out]).
/check holds a fixed input (tokens [1, T]) and the logits the C++ model computed on it; this
module recomputes them with gpt_model.GPT and exits 1 if any logit differs by more than
tol * max(1, max |logit|). Prints one line either way.
"""
import argparse
import sys

import numpy as np
import torch

from scaleprobe_analysis.h5open import open_h5  # the one safe open: verified bytes

from .gpt_model import GPT


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
    ap = argparse.ArgumentParser(prog="gpt_checkpoint", description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--tol", type=float, default=1e-4, help="relative tolerance on the logits")
    args = ap.parse_args()
    try:
        model, cfg, (tokens, want) = load(args.checkpoint)
        tokens = torch.from_numpy(tokens.astype(np.int64))
    except Exception as e:  # one line, like the C++ tools
        print(f"gpt_checkpoint: error: {args.checkpoint}: {e}", file=sys.stderr)
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
        print(f"gpt_checkpoint: error: logits differ: {line}", file=sys.stderr)
        return 1
    print(f"ok: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
