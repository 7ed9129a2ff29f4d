"""A simulated platform's link calibrated from a measured allreduce campaign.

An algorithm's simulated time on scripts/simulate's platforms is affine in the link's latency L
and inverse bandwidth 1/B: t(n) = a·L + b·n/B, with a and b fixed by the schedule. So one
simulation of the algorithm on a reference link (L0, B0) gives a and b through its α–β fit
(α_s = a·L0, β_s = b/B0), and the link on which it takes the measured α_m + β_m·n is

    L = L0 · α_m / α_s,    B = B0 · β_s / β_m.

The reference must be simulated on the flat platform (a refusal otherwise): there a message
crosses one link. The link calibrated is the one the reference run's messages took: the on-node one (loopback)
when it had one node, the host links when it had one rank per node. What the fit absorbs —
local reductions, copies, the library's progress — is folded into that link: the result
describes this algorithm at this rank count on that machine, not its wires, and says so.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .alphabeta import AlphaBetaFit, fit_alpha_beta


class CalibrationError(ValueError):
    pass


@dataclass(frozen=True)
class Calibration:
    link: str              # "node" (ranks of one host) or "link" (a host's link)
    latency_s: float
    bandwidth_Bps: float
    measured: AlphaBetaFit
    simulated: AlphaBetaFit
    reference_latency_s: float
    reference_bandwidth_Bps: float

    def flags(self) -> str:
        """scripts/simulate's options for the calibrated link."""
        return (f"--{self.link}-latency {self.latency_s * 1e6:.6g}us "
                f"--{self.link}-bandwidth {self.bandwidth_Bps / 1e9:.6g}GBps")


def _fit(summary: pd.DataFrame, algorithm: str, stat: str, what: str) -> AlphaBetaFit:
    part = summary[(summary["algorithm"] == algorithm) & (summary["bytes"] > 0)]
    if part.empty:
        raise CalibrationError(f"the {what} traces have no '{algorithm}' rows")
    # One point per size: the median over the traces (passes) of each size's statistic.
    per_size = part.groupby("bytes")[stat].median()
    try:
        return fit_alpha_beta(per_size.index.to_numpy(), per_size.to_numpy())
    except ValueError as e:
        raise CalibrationError(f"the {what} '{algorithm}' rows cannot be fitted: {e}") from None


def _env_number(env: dict, name: str) -> float:
    text = env.get(f"SCALEPROBE_SIM_{name}")
    if text is None:
        raise CalibrationError(f"the simulated trace does not record SCALEPROBE_SIM_{name} "
                               "(run it through scripts/simulate)")
    return float(text)


def calibrate(measured: list, simulated, algorithm: str = "ring", stat: str = "p50_us") -> Calibration:
    """measured: allreduce traces (Trace) measured on the machine; simulated: one allreduce trace of
    the same algorithm and rank count, simulated on a reference platform by scripts/simulate."""
    if not measured:
        raise CalibrationError("no measured allreduce trace")
    if any(t.simulated for t in measured):
        raise CalibrationError("a 'measured' trace is simulated")
    if not simulated.simulated:
        raise CalibrationError("the reference trace is not simulated")
    ranks = {t.nranks for t in measured}
    if ranks != {simulated.nranks}:
        raise CalibrationError(f"measured at {sorted(ranks)} ranks, simulated at {simulated.nranks}: calibrate like for like")
    env = simulated.env
    # On another topology a message crosses several links, whose hops the fit would fold into one.
    topology = env.get("SCALEPROBE_SIM_TOPOLOGY", "flat")  # absent: a trace from before topologies
    if topology != "flat":
        raise CalibrationError(f"the reference run's topology is {topology}: calibrate on the flat platform, "
                               "where each message crosses one link")
    nodes, per_node = _env_number(env, "NODES"), _env_number(env, "RANKS_PER_NODE")
    if nodes == 1:
        link = "node"
    elif per_node == 1:
        link = "link"
    else:
        raise CalibrationError(f"the reference run had {nodes:g} nodes of {per_node:g} ranks: its messages took both "
                               "kinds of link; simulate one node, or one rank per node")
    L0 = _env_number(env, f"{link.upper()}_LATENCY")
    B0 = _env_number(env, f"{link.upper()}_BANDWIDTH")
    m = _fit(pd.concat([t.table("summary") for t in measured]), algorithm, stat, "measured")
    s = _fit(simulated.table("summary"), algorithm, stat, "simulated")
    if s.alpha_us <= 0 or m.beta_us_per_byte <= 0:
        raise CalibrationError("a fit has no latency (simulated) or no bandwidth term (measured): "
                               "cover smaller and larger sizes")
    return Calibration(link, L0 * m.alpha_us / s.alpha_us, B0 * s.beta_us_per_byte / m.beta_us_per_byte,
                       m, s, L0, B0)
