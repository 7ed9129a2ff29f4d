"""The α–β fit recovers known parameters from synthetic timings.

Sizes 8 B … 64 MiB in powers of two (24 points), α = 3 µs, β = 2.5e-4 µs/B (1/β = 4 GB/s).
Exact data must be recovered to 1e-9 relative. With ±5 % uniform multiplicative noise, α
and β must each be within 5 % (over 2000 seeds the worst errors seen were 2.8 % and 3.0 %);
an unweighted least-squares fit of the same data misses α by more than 100 %, so the noise
tests do check the weighting.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from scaleprobe_analysis.alphabeta import fit_alpha_beta, fit_summary

ALPHA, BETA = 3.0, 2.5e-4
SIZES = 2.0 ** np.arange(3, 27)
NOISE_TOLERANCE = 0.05


def noisy(t, seed):
    return t * (1 + np.random.default_rng(seed).uniform(-0.05, 0.05, t.size))


def test_exact_recovery():
    fit = fit_alpha_beta(SIZES, ALPHA + BETA * SIZES)
    assert fit.alpha_us == pytest.approx(ALPHA, rel=1e-9)
    assert fit.beta_us_per_byte == pytest.approx(BETA, rel=1e-9)
    assert fit.bandwidth_GBps == pytest.approx(4.0, rel=1e-9)
    assert fit.rms_rel_error < 1e-12 and fit.points == SIZES.size


@pytest.mark.parametrize("seed", range(20))
def test_recovery_with_5_percent_noise(seed):
    fit = fit_alpha_beta(SIZES, noisy(ALPHA + BETA * SIZES, seed))
    assert fit.alpha_us == pytest.approx(ALPHA, rel=NOISE_TOLERANCE)
    assert fit.beta_us_per_byte == pytest.approx(BETA, rel=NOISE_TOLERANCE)
    assert fit.max_rel_error < 0.1


def test_noise_case_needs_relative_weighting():
    """Plain least squares on the same data is far off: the test above would catch it."""
    t = noisy(ALPHA + BETA * SIZES, 0)
    plain_alpha, _ = np.linalg.lstsq(np.column_stack([np.ones_like(SIZES), SIZES]), t, rcond=None)[0]
    assert abs(plain_alpha / ALPHA - 1) > 0.5


def test_parameters_never_negative():
    pure_bandwidth = fit_alpha_beta(SIZES, noisy(BETA * SIZES, 1))
    assert pure_bandwidth.alpha_us >= 0
    assert pure_bandwidth.beta_us_per_byte == pytest.approx(BETA, rel=NOISE_TOLERANCE)
    flat = fit_alpha_beta(SIZES, np.full(SIZES.size, 7.0) - 1e-6 * np.log(SIZES))  # slightly falling
    assert flat.beta_us_per_byte == 0 and math.isinf(flat.bandwidth_GBps)
    assert flat.alpha_us == pytest.approx(7.0, rel=1e-3)


def test_needs_two_sizes():
    with pytest.raises(ValueError, match="two or more distinct message sizes"):
        fit_alpha_beta([1024, 1024], [5.0, 5.1])


def test_fit_summary_per_algorithm():
    rows = []
    for algorithm, alpha, beta in (("ring", 4.0, 1e-3), ("tree", 1.5, 4e-3)):
        for n in SIZES[:16]:
            rows.append({"algorithm": algorithm, "dtype": "f32", "bytes": int(n), "t_mean_us": alpha + beta * n})
    fits = fit_summary(pd.DataFrame(rows)).set_index("series")
    assert list(fits.index) == ["ring", "tree"]
    assert fits.loc["ring", "alpha_us"] == pytest.approx(4.0) and fits.loc["tree", "beta_us_per_byte"] == pytest.approx(4e-3)
    assert fits.loc["tree", "bandwidth_GBps"] == pytest.approx(0.25)


def test_fit_real_trace(allreduce_trace):
    from helpers import ALLREDUCE_ALGORITHMS
    from scaleprobe_analysis.trace import load_trace

    fits = fit_summary(load_trace(allreduce_trace).table("summary"))
    assert sorted(fits["algorithm"]) == sorted(ALLREDUCE_ALGORITHMS)
    assert (fits["alpha_us"] >= 0).all() and (fits["beta_us_per_byte"] >= 0).all()
    finite = fits["beta_us_per_byte"] > 0
    assert np.allclose(fits.loc[finite, "bandwidth_GBps"], 1e-3 / fits.loc[finite, "beta_us_per_byte"])
