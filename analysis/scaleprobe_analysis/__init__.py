"""scaleprobe_analysis: read scaleprobe HDF5 traces, fit α–β models, plot and report.

Modules: ``trace`` (load + validate), ``views`` (derived tables), ``samples`` (per-iteration
views of the samples table), ``alphabeta`` (fit), ``imbalance`` (per-rank imbalance),
``plots`` (figures), ``train`` / ``train_plots`` (trainer traces: cases, latency breakdown,
overlap, strong/weak scaling), ``report`` (markdown), ``timeline`` (Chrome trace-event export),
``compare`` (two campaigns side by side), ``cli`` (``scaleprobe-analyze`` commands).
"""
from .alphabeta import AlphaBetaFit, fit_alpha_beta, fit_summary
from .trace import Campaign, Trace, TraceError, load_campaign, load_trace

__all__ = ["AlphaBetaFit", "Campaign", "Trace", "TraceError", "fit_alpha_beta", "fit_summary",
           "load_campaign", "load_trace"]
__version__ = "0.1.0"
