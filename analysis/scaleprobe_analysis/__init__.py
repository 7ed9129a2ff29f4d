"""scaleprobe_analysis: read scaleprobe HDF5 traces, fit α–β models, plot and report.

Modules: ``trace`` (load + validate), ``views`` (derived tables), ``alphabeta`` (fit),
``plots`` (figures), ``report`` (markdown), ``cli`` (``scaleprobe-analyze`` commands).
"""
from .alphabeta import AlphaBetaFit, fit_alpha_beta, fit_summary
from .trace import Campaign, Trace, TraceError, load_campaign, load_trace

__all__ = ["AlphaBetaFit", "Campaign", "Trace", "TraceError", "fit_alpha_beta", "fit_summary",
           "load_campaign", "load_trace"]
__version__ = "0.1.0"
