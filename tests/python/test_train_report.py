"""The report handles trainer traces (kind `train`) made by the real gpt_train binary."""
from __future__ import annotations

import subprocess

from helpers import build_dir, need_binary, run_cli


def test_report_on_a_real_train_trace(tmp_path):
    exe = build_dir() / "trainers" / "gpt" / "gpt_train"
    need_binary(exe)
    campaign = tmp_path / "campaign"
    campaign.mkdir()
    proc = subprocess.run([str(exe), "-m", "gpt-micro", "-B", "2", "-s", "4", "--synthetic-bytes", "20000", "-q",
                           "-o", str(campaign / "train.h5")], capture_output=True, text=True, timeout=120,
                          env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    out = run_cli("report", str(campaign), "-o", str(tmp_path / "report"))
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "report" / "report.md").read_text()
    assert "## train: train (gpt_train)" in text
    assert "### Step-phase profile" in text and "backward" in text
    assert "### Steps" in text
