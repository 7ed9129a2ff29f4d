"""Kind ``collective`` (``collective_perf``: reduce-scatter, all-gather, broadcast, reduce, all-to-all).

Its traces have kind ``allreduce``'s tables and columns (docs/trace-schema.md), so this module is
that one's views (allreduce.py: definitions of every number) with the collective's name in the
titles, the trace's own bus-bandwidth factor in the captions, and the ``collective`` phase; the
summary's ``vs_mpi`` is the ratio to the MPI library's own call of that collective.
"""
from __future__ import annotations

from . import allreduce as _allreduce
from .samples import phase_views

KIND = "collective"
SUMMARY_TABLE = _allreduce.SUMMARY_TABLE
CASE_KEYS = _allreduce.CASE_KEYS
CASE_AXIS = _allreduce.CASE_AXIS
IMBALANCE_NOTE = _allreduce.IMBALANCE_NOTE
TIMELINE_NOTE = _allreduce.TIMELINE_NOTE

rank_times, iteration_times = phase_views("collective")  # a case is timed by the collective phase

figures = _allreduce.figures
report_tables = _allreduce.report_tables
case_labels = _allreduce.case_labels
case_table = _allreduce.case_table
case_args = _allreduce.case_args
timeline_events = _allreduce.timeline_events
campaign_sections = _allreduce.campaign_sections
backend_cases = _allreduce.backend_cases
