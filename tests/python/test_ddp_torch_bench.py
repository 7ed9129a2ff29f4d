"""scaleprobe_peers.{gpt,resnet}_ddp_torch (the harness: scaleprobe_peers.ddp_peer's ddp_main):
PyTorch DDP (gloo) at 2 ranks prints one JSON line per cap.

The module launches its own ranks (env:// rendezvous on 127.0.0.1) and needs torch; gpt-micro,
2 caps and 3 summarised steps take a few seconds. The no_sync case is summarised like the caps
(the same-load baseline of bench-peers' scaling rows), --cpu-sets pins each rank, and the ResNet
peer starts from resnet_train's --save-init weights (BN buffers included).
"""
from __future__ import annotations

import importlib
import json
import math
import os
import subprocess
import sys

import pytest

import optional_parts
from helpers import PYTHON_TREE

MODULE = "scaleprobe_peers.gpt_ddp_torch"
RESNET_MODULE = "scaleprobe_peers.resnet_ddp_torch"
CAPS = ["tensor", "1"]
STEPS = 3

FLOAT_KEYS = ["bucket_cap_mb", "iteration_mean_s", "iteration_median_s", "iteration_min_s", "forward_mean_s",
              "backward_mean_s", "optimizer_mean_s", "step_mean_s", "cpu_mean_s", "compute_est_s",
              "exposed_comm_est_s", "tokens_per_s", "comm_mean_s", "exposed_comm_mean_s", "baseline_iteration_mean_s",
              "baseline_iteration_median_s"]
INT_KEYS = ["buckets", "ranks", "threads", "torch_threads", "batch", "seq_len", "steps"]


def run(*args: str, timeout: float = 60, module=MODULE) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(PYTHON_TREE)})


@pytest.fixture(scope="module")
def ddp_run(tmp_path_factory):
    optional_parts.importorskip("torch", "torch")
    optional_parts.importorskip("torch.distributed", "torch")
    raw = tmp_path_factory.mktemp("ddp_torch") / "raw.json"
    proc = run("--model", "gpt-micro", "--batch", "2", "--steps", str(STEPS), "--caps", ",".join(CAPS),
               "--ranks", "2", "--threads", "1", "--comm-timing", "--raw", str(raw), "--timeout", "50",
               "--cpu-sets", "1;0")
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return lines, json.loads(raw.read_text())


def test_one_json_line_per_cap_with_the_schema(ddp_run):
    lines, _ = ddp_run
    assert [d["cap"] for d in lines] == CAPS
    for d in lines:
        assert d["impl"] == "torch-ddp-gloo" and d["model"] == "gpt-micro"
        for k in FLOAT_KEYS:
            assert isinstance(d[k], float) and math.isfinite(d[k]), (d["cap"], k, d.get(k))
        for k in INT_KEYS:
            assert isinstance(d[k], int), (d["cap"], k, d.get(k))
        assert (d["ranks"], d["threads"], d["torch_threads"], d["batch"], d["seq_len"], d["steps"]) == \
            (2, 1, 1, 2, 16, STEPS)
        assert d["gradient_as_bucket_view"] is True
        assert 0 < d["iteration_min_s"] <= d["iteration_median_s"]
        assert d["iteration_min_s"] <= d["iteration_mean_s"]
        # the slowest rank's step is at least the mean rank's
        assert d["iteration_mean_s"] >= d["step_mean_s"] * (1 - 1e-9)
        assert d["step_mean_s"] == pytest.approx(d["forward_mean_s"] + d["backward_mean_s"] + d["optimizer_mean_s"],
                                                 rel=1e-6)
        assert d["tokens_per_s"] == pytest.approx(2 * 2 * 16 / d["iteration_mean_s"])
        assert d["exposed_comm_est_s"] == pytest.approx(d["step_mean_s"] - d["compute_est_s"])
        assert d["comm_mean_s"] > 0 and d["exposed_comm_mean_s"] >= 0 and "overlap_mean" not in d
    by_cap = {d["cap"]: d for d in lines}
    # gpt-micro: 28 parameter tensors, 118 KiB in all: one bucket each under 'tensor', a single one under 1 MiB
    assert by_cap["tensor"]["buckets"] == 28 and by_cap["1"]["buckets"] == 1


def test_raw_rows_round_robin_over_caps_and_no_sync(ddp_run):
    _, raw = ddp_run
    assert [r["rank"] for r in raw["ranks"]] == [0, 1]
    cases = CAPS + ["no_sync"]
    for rk in raw["ranks"]:
        rows = rk["rows"]
        assert len(rows) == len(cases) * (2 + STEPS)  # two warm-up rounds
        assert [r["case"] for r in rows] == [cases[i % len(cases)] for i in range(len(rows))]
        assert [r["in_summary"] for r in rows] == [int(i >= 2 * len(cases)) for i in range(len(rows))]
        for r in rows:
            synced = r["case"] != "no_sync"
            assert ("comm_s" in r) == synced
            if synced and r["in_summary"]:
                assert r["hook_buckets"] == rk["buckets"][r["case"]]


def test_bad_cap_is_refused():
    proc = run("--caps", "1,banana")
    assert proc.returncode != 0 and "bad cap 'banana'" in proc.stderr


def slowest_steps(rows: list[dict], case: str) -> list[float]:
    by_step: dict[int, float] = {}
    for r in rows:
        if r["case"] == case and r["in_summary"]:
            by_step[r["step"]] = max(by_step.get(r["step"], 0.0), r["step_s"])
    return [by_step[k] for k in sorted(by_step)]


def test_no_sync_baseline_is_summarised_like_a_cap_and_ranks_are_pinned(ddp_run):
    """baseline_iteration_median_s: the no_sync case's slowest rank per step, median over steps, from
    the raw rows; rank r ran on the r-th --cpu-sets entry (here reversed: rank 0 on CPU 1)."""
    import statistics
    lines, raw = ddp_run
    rows = [row for rk in raw["ranks"] for row in rk["rows"]]
    for d in lines:
        assert d["baseline_iteration_median_s"] == pytest.approx(statistics.median(slowest_steps(rows, "no_sync")))
        assert d["iteration_median_s"] == pytest.approx(statistics.median(slowest_steps(rows, d["cap"])))
        assert d["cpus"] == [[1], [0]]
    assert [rk["cpus"] for rk in raw["ranks"]] == [[1], [0]]


def test_bad_cpu_sets_are_refused():
    proc = run("--ranks", "2", "--cpu-sets", "0")
    assert proc.returncode != 0 and "--cpu-sets has 1 entries for 2 ranks" in proc.stderr
    proc = run("--cpu-sets", "0;x")
    assert proc.returncode != 0 and "bad --cpu-sets" in proc.stderr


def test_resnet_peer_from_the_trainers_weights(tmp_path):
    """The ResNet DDP peer at 2 ranks, from resnet_train's --save-init checkpoint (its logits checked
    on load, BN running statistics included): images_per_s, no seq_len, the same schema otherwise."""
    optional_parts.importorskip("torch", "torch")
    from helpers import build_dir, need_binary
    exe = build_dir() / "trainers" / "resnet" / "resnet_train"
    need_binary(exe)
    init = tmp_path / "init.h5"
    subprocess.run([str(exe), "-m", "resnet20", "-B", "2", "-s", "1", "--synthetic-images", "4", "--synthetic-test", "1",
                    "--val-images", "0", "-q", "--save-init", str(init), "-o", str(tmp_path / "t.h5")], check=True,
                   capture_output=True, timeout=120, env={**os.environ, "OMP_NUM_THREADS": "1"})
    proc = run("--batch", "2", "--steps", "2", "--caps", "25", "--ranks", "2", "--init", str(init),
               "--timeout", "80", module=RESNET_MODULE, timeout=90)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (d,) = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert d["model"] == "resnet20" and d["ranks"] == 2 and d["batch"] == 2 and d["steps"] == 2
    assert "seq_len" not in d and "tokens_per_s" not in d
    assert d["images_per_s"] == pytest.approx(2 * 2 / d["iteration_mean_s"])
    assert d["baseline_iteration_median_s"] > 0 and d["buckets"] >= 1


def test_resnet_peer_models_are_the_one_rank_peers():
    optional_parts.importorskip("torch", "torch")
    ddp, one_rank = (importlib.import_module(m) for m in (RESNET_MODULE, "scaleprobe_peers.resnet_torch"))
    assert ddp.MODELS == tuple(one_rank.PRESETS)
    proc = run("--model", "resnet99", module=RESNET_MODULE)
    assert proc.returncode != 0 and "invalid choice: 'resnet99'" in proc.stderr
