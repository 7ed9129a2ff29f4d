"""compare: matching, verdicts and exit status on constructed (simulated=1) traces.

The synthetic traces come from synthetic.py: complete schema-1 files written with h5py, marked
``simulated = 1``. A 1.5× slower copy must be a regression, a 1.5× faster one an improvement, an
identical copy and two noisy draws of the same distribution must be within noise.
"""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from scaleprobe_analysis.cli import main
from scaleprobe_analysis.compare import (IMPROVEMENT, NOISE, REGRESSION, bootstrap_median_ratio, compare_campaigns,
                                         compare_traces, render, verdict)
from scaleprobe_analysis.campaign import Campaign, load_campaign
from scaleprobe_analysis.trace import load_trace
from synthetic import lognormal_walls, scaled_copy, write_allreduce_trace
from helpers import edit_h5

CASES = [{"algorithm": "ring", "bytes": 1024}, {"algorithm": "ring", "bytes": 65536},
         {"algorithm": "mpi", "bytes": 1024}, {"algorithm": "mpi", "bytes": 65536, "placement": "in"}]
MEDIANS_S = [5e-6, 40e-6, 4e-6, 35e-6]


def synthetic(path, seed=0, sigma=0.05, iters=40, cases=CASES, medians=MEDIANS_S):
    walls = [lognormal_walls(seed * 100 + i, 2, iters, m, sigma) for i, m in enumerate(medians)]
    return write_allreduce_trace(path, cases, walls)


@pytest.fixture()
def base(tmp_path):
    return synthetic(tmp_path / "base.h5")


def verdicts(base_path, new_path, **kw):
    result = compare_traces(load_trace(base_path), load_trace(new_path), **kw)
    return result, list(result.rows["verdict"])


def test_identical_is_within_noise(base, tmp_path, capsys):
    same = shutil.copyfile(base, tmp_path / "same.h5")
    result, judged = verdicts(base, same)
    assert judged == [NOISE] * len(CASES) and (result.rows["change"] == 0).all()
    assert result.unmatched.empty
    assert any("SIMULATED/MODELLED" in note for note in result.notes)
    assert main(["compare", str(base), str(same), "--fail-on-regression"]) == 0
    assert "0 regression(s), 0 improvement(s), 4 within noise" in capsys.readouterr().out


def test_slower_copy_is_a_regression_and_fails(base, tmp_path, capsys):
    slow = scaled_copy(base, tmp_path / "slow.h5", 1.5)
    result, judged = verdicts(base, slow)
    assert judged == [REGRESSION] * len(CASES)
    assert np.allclose(result.rows["change"], 0.5)
    assert (result.rows["ratio_lo"] > 1).all()
    assert main(["compare", str(base), str(slow)]) == 0  # without the flag: report only
    assert main(["compare", str(base), str(slow), "--fail-on-regression"]) == 1
    captured = capsys.readouterr()
    assert captured.out.count("**regression**") == 2 * len(CASES) and "+50.0%" in captured.out
    assert "4 regression(s)" in captured.err


def test_faster_copy_is_an_improvement(base, tmp_path, capsys):
    fast = scaled_copy(base, tmp_path / "fast.h5", 1 / 1.5)
    _, judged = verdicts(base, fast, stat="p50_us")
    assert judged == [IMPROVEMENT] * len(CASES)
    assert main(["compare", str(base), str(fast), "--fail-on-regression", "--stat", "p50_us"]) == 0
    assert "base p50_us" in capsys.readouterr().out


def test_threshold_is_the_minimum_effect(base, tmp_path):
    slightly = scaled_copy(base, tmp_path / "slightly.h5", 1.03)  # certain, but only 3 %
    _, judged = verdicts(base, slightly, threshold=0.05)
    assert judged == [NOISE] * len(CASES)
    _, judged = verdicts(base, slightly, threshold=0.01)
    assert judged == [REGRESSION] * len(CASES)


def test_noisy_but_equal_is_within_noise(tmp_path):
    """Two draws of one wide distribution: means differ by more than the threshold, yet no verdict."""
    a = synthetic(tmp_path / "a.h5", seed=1, sigma=0.5, iters=12)
    b = synthetic(tmp_path / "b.h5", seed=2, sigma=0.5, iters=12)
    result, judged = verdicts(a, b)
    assert (result.rows["change"].abs() > 0.05).any(), "test data too tame to exercise the noise test"
    assert judged == [NOISE] * len(CASES)
    assert ((result.rows["ratio_lo"] < 1) & (result.rows["ratio_hi"] > 1)).all()


def test_unmatched_rows_are_listed(base, tmp_path):
    cases = CASES[:3] + [{"algorithm": "tree", "bytes": 4096}]
    other = synthetic(tmp_path / "other.h5", cases=cases)
    result = compare_traces(load_trace(base), load_trace(other))
    assert len(result.rows) == 3
    un = result.unmatched.set_index("algorithm")
    assert un.loc["mpi", "only_in"] == "base" and un.loc["mpi", "placement"] == "in"
    assert un.loc["tree", "only_in"] == "new" and un.loc["tree", "bytes"] == 4096
    text = render(compare_campaigns(Campaign(tmp_path, [load_trace(base)]), Campaign(tmp_path, [load_trace(other)])))
    assert "Unmatched rows (2):" in text and "| tree | f32 | sum | out | 4K | new |" in text
    assert "2 unmatched row(s)" in text


def test_verdict_rule():
    assert verdict(0.2, 1.1, 1.3, 0.05) == REGRESSION
    assert verdict(0.2, 0.9, 1.3, 0.05) == NOISE  # interval includes 1
    assert verdict(0.04, 1.01, 1.06, 0.05) == NOISE  # below the threshold
    assert verdict(-0.2, 0.7, 0.9, 0.05) == IMPROVEMENT
    lo, hi = bootstrap_median_ratio(np.arange(1.0, 30.0), np.arange(1.0, 30.0) * 2)
    assert 1 < lo < 2 < hi


def test_bucket_sweep_rows_matched_by_layout_algorithm_cap(bucket_trace, tmp_path):
    base = load_trace(bucket_trace)
    same = compare_traces(base, base)
    assert list(same.rows.columns[:3]) == ["layout", "algorithm", "cap"]
    assert len(same.rows) == len(base.table("summary")) and set(same.rows["verdict"]) == {NOISE}
    factor = 3.0
    slow = compare_traces(base, load_trace(scaled_copy(bucket_trace, tmp_path / "slow.h5", factor)))
    assert np.allclose(slow.rows["change"], factor - 1)
    # Only 3 iterations per case on a shared machine: the spread can exceed even 3x, so each row
    # is a regression exactly when its interval clears 1, and never anything else.
    assert (slow.rows["ratio_lo"] >= same.rows["ratio_lo"] * factor * 0.999).all()
    expected = np.where(slow.rows["ratio_lo"] > 1, REGRESSION, NOISE)
    assert list(slow.rows["verdict"]) == list(expected)


def test_campaigns_paired_by_path(campaign_dir, tmp_path, capsys):
    copy = shutil.copytree(campaign_dir, tmp_path / "copy")
    assert main(["compare", str(campaign_dir), str(copy), "--fail-on-regression"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n## ") == 2 and "0 regression(s), 0 improvement(s)" in out
    (copy / "sweep" / "bucket_sweep.h5").unlink()
    comparison = compare_campaigns(load_campaign(campaign_dir), load_campaign(copy))
    assert [p.kind for p in comparison.pairs] == ["allreduce"]
    assert comparison.unpaired == ["base: sweep_bucket_sweep (bucket_sweep)"]


def test_nothing_to_compare_exits_1(allreduce_trace, bucket_trace, capsys):
    assert main(["compare", str(allreduce_trace), str(bucket_trace)]) == 1
    assert "no pair of allreduce or bucket_sweep traces of the same kind" in capsys.readouterr().err


def test_train_traces_compare_case_by_case(train_campaign):
    """Trainer runs pair by (model, ranks, global batch, algorithm, cap); identical = no change."""
    a = load_trace(train_campaign / "strong" / "np2.h5")
    result = compare_traces(a, a)
    assert list(result.rows["algorithm"]) == ["ring", "ring"]
    assert sorted(result.rows["bucket_cap"]) == sorted(["tensor", "0.01"])
    assert (result.rows["change"] == 0).all()
    assert set(result.rows["verdict"]) <= {NOISE, "too few samples"}
    # a different rank count is a different case: nothing matches
    other = compare_traces(a, load_trace(train_campaign / "strong" / "np3.h5"))
    assert other.rows.empty and len(other.unmatched) == 4


def test_different_kernel_environment_is_refused(allreduce_trace, tmp_path, capsys):
    """Two sides under different kernel-relevant variables ran different kernels: refused in one line
    naming them, unless --allow-env-difference (then a note). The CPU identity is shown either way."""
    other = shutil.copyfile(allreduce_trace, tmp_path / "other.h5")
    # A value other than the one the trace ran under (some machines set OPENBLAS_CORETYPE themselves).
    base_value = load_trace(allreduce_trace).kernel_env.get("OPENBLAS_CORETYPE")
    new_value = "SkylakeX" if base_value == "Haswell" else "Haswell"
    with edit_h5(other) as f:
        f["provenance/env"].attrs["OPENBLAS_CORETYPE"] = new_value
        f["provenance/env"].attrs["OMPI_MCA_btl"] = "self,vader"  # transport, not a kernel: ignored
    assert main(["compare", str(allreduce_trace), str(other)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"OPENBLAS_CORETYPE: {base_value or '(unset)'} vs {new_value}" in err[0], err
    assert "OMPI_MCA_btl" not in err[0]
    assert main(["compare", str(allreduce_trace), str(other), "--allow-env-difference"]) == 0
    assert "kernel-relevant environment differs: OPENBLAS_CORETYPE" in capsys.readouterr().out
    trace = load_trace(allreduce_trace)
    assert "fam " in trace.cpu_identity and trace.cpu_identity.startswith(str(trace.provenance["cpu_model"]))
