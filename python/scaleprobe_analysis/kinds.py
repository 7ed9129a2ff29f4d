"""The registry of trace kinds: kind → the module that knows that kind.

Everything kind-specific lives in the kind's module; report, compare, imbalance, timeline, plots
and the command line only ever call the interface below through :func:`module_for`, so adding a
kind is one new module and one line in :data:`MODULES`.

Every kind module provides:

- ``KIND``: the root attribute ``kind`` it handles;
- ``figures(trace) -> {name: Figure}``: the figures of one trace;
- ``report_tables(trace) -> [markdown lines]``: its tables in the trace's report section;
- ``case_labels(trace) -> Series`` (index: case): short case names ('ring 1K', 'ring cap 25');
- ``rank_times(trace) -> DataFrame | None``: per rank, case and iteration the time compared across
  ranks for the per-rank imbalance (columns rank, case, iteration, wall_us, cpu_us); None when
  it does not apply; ``CASE_AXIS`` and ``IMBALANCE_NOTE`` say what the imbalance figure shows;
- ``CASE_KEYS``, ``case_table(trace)`` and ``iteration_times(trace)``: what ``compare`` matches
  cases by, the per-case table holding those keys and ``t_mean_us``/``p50_us`` (ValueError if the
  trace cannot be compared), and per (case, iteration) the slowest rank's time in µs;
- ``case_args(trace)`` and ``timeline_events(trace, pid, samples)``: the fields naming a case in
  a timeline event, and the kind's own event layout (None: one track per rank); ``TIMELINE_NOTE``
  (optionally ``timeline_note(trace)``, the note for one trace, where it depends on the trace);
- ``campaign_sections(points, options) -> [campaign.Section]``: the cross-point sections;
- ``SUMMARY_TABLE``: the name of its per-case table, what ``export`` writes;
- ``backend_cases(points) -> BackendCases``: every case of the points, passes combined, for the
  backends-side-by-side section (``backends.py``).
"""
from __future__ import annotations

from types import ModuleType

from . import allreduce, bucket_sweep, collective, p2p, replay, train

MODULES: dict[str, ModuleType] = {m.KIND: m for m in (allreduce, bucket_sweep, collective, p2p, replay, train)}
INTERFACE = (  # every module in MODULES defines these (checked by tests/python/test_structure.py)
    "KIND", "figures", "report_tables", "case_labels", "rank_times", "CASE_AXIS", "IMBALANCE_NOTE", "CASE_KEYS",
    "case_table", "iteration_times", "case_args", "timeline_events", "TIMELINE_NOTE", "campaign_sections",
    "SUMMARY_TABLE", "backend_cases")


def module_for(kind: str) -> ModuleType | None:
    """The module of ``kind`` (a trace's root attribute), or None for a kind this package does not know."""
    return MODULES.get(kind)
