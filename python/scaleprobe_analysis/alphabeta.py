"""The α–β (latency–bandwidth) model of a collective: t(n) = α + β·n.

α is the per-call latency (µs) and β the time per byte (µs/byte), so 1/β is the asymptotic
bandwidth. Allreduce sizes span many decades, so an ordinary least-squares fit is decided by
the largest messages alone and returns a meaningless (often negative) α. We minimise the sum
of squared *relative* errors, Σ((α + β·n − t)/t)², which gives every size the same say, and
constrain α, β ≥ 0 because negative latency or bandwidth has no physical meaning.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .series import series


@dataclass(frozen=True)
class AlphaBetaFit:
    """Result of one fit; times in µs, sizes in bytes."""

    alpha_us: float
    beta_us_per_byte: float
    points: int
    rms_rel_error: float
    max_rel_error: float

    @property
    def bandwidth_GBps(self) -> float:
        """1/β in GB/s (10⁹ bytes/s); infinite if β is 0."""
        return 1e-3 / self.beta_us_per_byte if self.beta_us_per_byte > 0 else math.inf

    def predict_us(self, nbytes) -> np.ndarray:
        return self.alpha_us + self.beta_us_per_byte * np.asarray(nbytes, dtype=float)


def _relative_objective(alpha: float, beta: float, n: np.ndarray, t: np.ndarray) -> float:
    return float(np.sum(((alpha + beta * n - t) / t) ** 2))


_ROUNDING_FLOOR = 1e-12  # relative residuals below this are rounding, not misfit


def fit_alpha_beta(nbytes, t_us) -> AlphaBetaFit:
    """Fit t = α + β·n minimising relative error with α, β ≥ 0.

    Dividing each equation α + β·n_i = t_i by t_i turns the relative-error objective into an
    ordinary linear least-squares problem [1/t, n/t]·[α, β] = 1. With two unknowns the bound
    constraints are handled exactly: if the free optimum is infeasible, the constrained one
    lies on an axis (α = 0 or β = 0), each of which has a closed form.
    """
    n = np.asarray(nbytes, dtype=float)
    t = np.asarray(t_us, dtype=float)
    if n.shape != t.shape or n.ndim != 1:
        raise ValueError("nbytes and t_us must be 1-D arrays of equal length")
    keep = np.isfinite(n) & np.isfinite(t) & (t > 0) & (n >= 0)
    n, t = n[keep], t[keep]
    if len(np.unique(n)) < 2:
        raise ValueError("an alpha-beta fit needs timings at two or more distinct message sizes")
    a = np.column_stack([1.0 / t, n / t])
    scale = np.linalg.norm(a, axis=0)  # column scaling keeps the solve well conditioned
    coef, *_ = np.linalg.lstsq(a / scale, np.ones_like(t), rcond=None)
    alpha, beta = coef / scale
    if alpha < 0 or beta < 0:
        u, v = 1.0 / t, n / t
        on_beta_axis = (0.0, max(float(v.sum() / (v @ v)), 0.0))
        on_alpha_axis = (max(float(u.sum() / (u @ u)), 0.0), 0.0)
        alpha, beta = min((on_beta_axis, on_alpha_axis), key=lambda ab: _relative_objective(*ab, n, t))
    rel = (alpha + beta * n - t) / t
    # An exact fit (two sizes, both bounds free) leaves residuals of a few ulps whose digits depend
    # on which LAPACK kernels the CPU at hand gets; they are 0, so a report regenerates anywhere.
    rel[np.abs(rel) < _ROUNDING_FLOOR] = 0.0
    return AlphaBetaFit(alpha_us=float(alpha), beta_us_per_byte=float(beta), points=len(t),
                        rms_rel_error=float(np.sqrt(np.mean(rel**2))),
                        max_rel_error=float(np.max(np.abs(rel))))


def fit_summary(summary: pd.DataFrame, stat: str = "t_mean_us") -> pd.DataFrame:
    """One α–β fit per series (algorithm, plus dtype/op/placement/sync where those vary).

    ``stat`` picks the time column: ``t_mean_us`` (default) or e.g. ``p50_us``, which is
    less sensitive to a few iterations delayed by other processes on a shared machine.
    Series with fewer than two sizes are left out.
    """
    rows = []
    for label, part in series(summary):
        try:
            fit = fit_alpha_beta(part["bytes"], part[stat])
        except ValueError:
            continue
        rows.append({"series": label, "algorithm": part["algorithm"].iloc[0], "stat": stat,
                     "alpha_us": fit.alpha_us, "beta_us_per_byte": fit.beta_us_per_byte,
                     "bandwidth_GBps": fit.bandwidth_GBps, "points": fit.points,
                     "rms_rel_error": fit.rms_rel_error, "max_rel_error": fit.max_rel_error,
                     "fit": fit})
    columns = ["series", "algorithm", "stat", "alpha_us", "beta_us_per_byte", "bandwidth_GBps",
               "points", "rms_rel_error", "max_rel_error", "fit"]
    return pd.DataFrame(rows, columns=columns)
