"""trainers/gpt/bench_ddp_torch.py: PyTorch DDP (gloo) at 2 ranks prints one JSON line per cap.

The script launches its own ranks (env:// rendezvous on 127.0.0.1) and needs torch; gpt-micro,
2 caps and 3 summarised steps take a few seconds.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

import optional_parts
from helpers import REPO

SCRIPT = REPO / "trainers" / "gpt" / "bench_ddp_torch.py"
CAPS = ["tensor", "1"]
STEPS = 3

FLOAT_KEYS = ["bucket_cap_mb", "iteration_mean_s", "iteration_median_s", "iteration_min_s", "forward_mean_s",
              "backward_mean_s", "optimizer_mean_s", "step_mean_s", "cpu_mean_s", "compute_est_s",
              "exposed_comm_est_s", "tokens_per_s", "comm_mean_s", "exposed_comm_mean_s"]
INT_KEYS = ["buckets", "ranks", "threads", "torch_threads", "batch", "seq_len", "steps"]


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def ddp_run(tmp_path_factory):
    optional_parts.importorskip("torch", "torch")
    optional_parts.importorskip("torch.distributed", "torch")
    raw = tmp_path_factory.mktemp("ddp_torch") / "raw.json"
    proc = run("--model", "gpt-micro", "--batch", "2", "--steps", str(STEPS), "--caps", ",".join(CAPS),
               "--ranks", "2", "--threads", "1", "--comm-timing", "--raw", str(raw), "--timeout", "50")
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
