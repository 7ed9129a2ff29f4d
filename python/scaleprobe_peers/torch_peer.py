"""What the PyTorch peers share ({gpt,resnet}_torch.py: one rank; {gpt,resnet}_ddp_torch.py:
DistributedDataParallel on gloo, through ddp_peer.py's harness).

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
import statistics
import time
from typing import TYPE_CHECKING

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
