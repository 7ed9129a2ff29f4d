"""The PyTorch peers (scaleprobe_peers.{gpt,resnet}_torch on scaleprobe_peers.torch_peer) start
from the trainer's own --save-init weights: the loaded model reproduces the logits the C++ model
stored in that checkpoint, the first loss is the untrained ln(classes) (PyTorch's default
initialisation gives something else), and the JSON line records what the comparison needs
(warm-up excluded, median, the torch build, threads, kernel variables). Needs torch.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

import optional_parts
from helpers import PYTHON_TREE, build_dir, edit_h5, mpi_env

PEERS = {  # trainer, model, its classes, checkpoint format, trainer args
    "gpt": ("gpt_train", "gpt-micro", 128, ["--synthetic-bytes", "20000", "--val-batches", "0"]),
    "resnet": ("resnet_train", "resnet20", 10, ["--synthetic-images", "64", "--synthetic-test", "1", "--val-images", "0"]),
}
THREADS_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def peer(kind: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", f"scaleprobe_peers.{kind}_torch", "--threads", "1", *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **THREADS_ENV, "PYTHONPATH": str(PYTHON_TREE)})


@pytest.fixture(scope="module", params=sorted(PEERS))
def init(request, tmp_path_factory):
    optional_parts.importorskip("torch", "torch")
    kind = request.param
    trainer, model, _, extra = PEERS[kind]
    exe = build_dir() / "trainers" / kind / trainer
    if not os.access(exe, os.X_OK):
        pytest.fail(f"{exe} not built")
    path = tmp_path_factory.mktemp(kind) / "init.h5"
    proc = subprocess.run([str(exe), "-m", model, "-s", "1", "-B", "4", *extra, "-q", "--save-init", str(path),
                           "-o", str(path.with_suffix(".trace.h5"))], capture_output=True, text=True, timeout=120,
                          env={**mpi_env(), **THREADS_ENV})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return kind, path


def test_the_peer_starts_from_the_trainers_weights(init):
    import importlib

    import torch
    from scaleprobe_peers.torch_peer import load_scaleprobe_weights
    kind, path = init
    _, model_name, _, _ = PEERS[kind]
    bench = importlib.import_module(f"scaleprobe_peers.{kind}_torch")
    if kind == "gpt":
        model, fmt = bench.GPT(**bench.PRESETS[model_name]), "scaleprobe-gpt-checkpoint"
        with h5py.File(path) as f:
            inputs, want = torch.from_numpy(f["check/tokens"][()].astype(np.int64)), f["check/logits"][()]
    else:
        _, blocks, width = bench.PRESETS[model_name]
        model, fmt = bench.ResNet(blocks, width), "scaleprobe-resnet-checkpoint"
        with h5py.File(path) as f:
            inputs, want = torch.from_numpy(f["check/images"][()].astype(np.float32)), f["check/logits"][()]
    load_scaleprobe_weights(model, str(path), fmt)
    with torch.no_grad():
        got = model.eval()(inputs).numpy()
    assert np.abs(got - want).max() <= 1e-3 * max(1.0, np.abs(want).max())
    other = "scaleprobe-resnet-checkpoint" if kind == "gpt" else "scaleprobe-gpt-checkpoint"
    with pytest.raises(ValueError, match=f"not a {other} checkpoint"):
        load_scaleprobe_weights(model, str(path), other)


def test_the_json_line_and_the_first_loss(init):
    kind, path = init
    _, model_name, classes, _ = PEERS[kind]
    small = ["--batch", "4"]
    proc = peer(kind, "--model", model_name, *small, "--steps", "5", "--init", str(path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    r = json.loads(proc.stdout)
    assert r["warmup_steps"] == 3 and r["steps"] == 2 and len(r["step_wall_s"]) == 5
    assert r["wall_median_s"] > 0 and r["torch_threads"] == 1 and r["interop_threads"] == 1
    # The kernel-relevant variables it ran under: ours, and any the machine sets (some set OPENBLAS_CORETYPE
    # for a CPU their OpenBLAS does not know).
    from scaleprobe_analysis.trace import KERNEL_ENV_PREFIXES
    expected_env = {k: v for k, v in sorted({**os.environ, **THREADS_ENV}.items()) if k.startswith(KERNEL_ENV_PREFIXES)}
    assert "BLAS" in r["torch_config"] and r["kernel_env"] == expected_env and r["init"] == str(path)
    assert abs(r["first_loss"] - math.log(classes)) < 0.3  # an untrained model of scaleprobe's initialisation
    assert r["init_logit_max_diff"] is not None and r["init_logit_max_diff"] < 1e-3  # the peer checked it
    refused = peer(kind, "--model", model_name, *small, "--steps", "3")
    assert refused.returncode != 0 and "at least 4" in refused.stderr


def test_a_peer_that_does_not_reproduce_the_logits_refuses_to_run(init, tmp_path):
    kind, path = init
    _, model_name, _, _ = PEERS[kind]
    altered = tmp_path / "altered.h5"
    altered.write_bytes(path.read_bytes())
    with edit_h5(altered) as f:
        f["check/logits"][...] = f["check/logits"][()] + 1.0  # as if the model had been loaded wrongly
    proc = peer(kind, "--model", model_name, "--batch", "4", "--steps", "4", "--init", str(altered))
    assert proc.returncode != 0 and "logits differ from the trainer's" in proc.stderr


def test_the_peer_records_the_same_kernel_variables_as_a_trace():
    """bench-peers compares a trace's kernel_env with the peer's: both must pick the same variables."""
    optional_parts.importorskip("torch", "torch")
    from scaleprobe_analysis.trace import KERNEL_ENV_PREFIXES as trace_prefixes
    from scaleprobe_peers.torch_peer import KERNEL_ENV_PREFIXES as peer_prefixes
    assert peer_prefixes == trace_prefixes
