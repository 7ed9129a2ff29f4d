"""scaleprobe_analysis: read scaleprobe HDF5 traces, fit α–β models, plot and report.

Modules by layer; a module imports only from its own layer or below (tests/python/test_structure.py):

- one trace, figure style, text: ``digest`` (the whole-file crc32 checked before h5py opens a file),
  ``h5open`` (the one open: the verified bytes, or an isolated child for a file without a digest),
  ``upgrade`` (a file without a digest re-written with one), ``trace`` (load + validate one
  trace), ``style`` (figure size, fonts, title + caption, legends outside, SIMULATED watermark,
  deterministic PNG + SVG), ``textfmt`` (sizes, markdown tables), ``series`` (the curves of a
  summary table; timing-thread CPU/wall),
  ``alphabeta`` (the α–β fit), ``calibrate`` (a simulated link from a measured fit), ``samples``
  (per-iteration views of the samples table);
- campaigns: ``manifest`` (jobs/submit-sweep's manifest.tsv), ``campaign`` (discovery, expected runs
  and their status, point identity, passes and their median/min/max);
- one module per trace kind, each with its tables, figures, report section, case labels and
  samples, compare keys and cross-point sections: ``allreduce``, ``collective`` (collective_perf,
  on allreduce's tables), ``bucket_sweep``, ``p2p``, ``replay`` (step_replay, simulated), ``train``
  (with ``train_tables``: definitions and scaling arithmetic, ``train_figures``, ``train_report``:
  its report section's tables, and ``train_timeline``: its timeline events);
- ``kinds``: the registry kind → module and the interface every kind module provides;
- kind-independent views dispatching through it: ``imbalance`` (per-rank imbalance), ``compare``
  (two campaigns side by side), ``timeline`` (Chrome trace-event export), ``export`` (the summary
  tables as CSV or JSON), ``backends`` (one configuration on several backends side by side);
- ``plots`` (every figure of a campaign), ``report`` (report.md), ``cli`` (``scaleprobe-analyze``).
"""
__version__ = "0.1.0"  # as python/pyproject.toml and the C++ project (CMakeLists.txt)

# Loaded on first use (PEP 562), so importing one module (h5open in a trainer's loader, trace in the
# isolated reader's child process) does not import pandas, matplotlib and every kind module.
_EXPORTS = {"AlphaBetaFit": "alphabeta", "fit_alpha_beta": "alphabeta", "fit_summary": "alphabeta",
            "Campaign": "campaign", "load_campaign": "campaign", "scan_campaign": "campaign_status",
            "Trace": "trace", "TraceError": "trace", "load_trace": "trace"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'scaleprobe_analysis' has no attribute '{name}'")
    import importlib
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
