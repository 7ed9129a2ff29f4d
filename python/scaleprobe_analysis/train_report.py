"""One train trace's section of the report: how it communicated, and its tables.

The kind's entry is ``train.py`` (``report_tables`` is its registry function); the numbers are
defined in ``train_tables.py``. A trace from the data-parallel engine gets its cases (algorithm ×
bucket cap), the per-iteration breakdown, the best cap per algorithm and the contention indicator,
each with what its columns mean for the trace's overlap mode (or for an older trace without the
modes, as it always did: its stored reports regenerate); every train trace gets the step-phase
profile and, where it has them, every step. ``has_modes`` and ``has_reference`` (what the run
recorded) also choose the timeline's tracks (``train_timeline.py``) and the figures (``train.py``).
"""
from __future__ import annotations

from . import train_pipeline
from .textfmt import markdown_table, seconds_to_ms
from .trace import Trace
from .train_tables import (breakdown_components, breakdown_table, cases_table, has_engine_tables, has_split, no_comm,
                           step_contention)

HIDDEN_DEFINITION = (
    "`comm_mean_s` = the buckets' allreduce time per step, each bucket from started to finished: in thread mode the "
    "communication thread's busy time = `peers_mean_s` (its handshake wait until every rank had the bucket ready; "
    "thread mode only, 0 otherwise) + `transfer_mean_s` (the allreduce calls); in progress mode each bucket starts as "
    "backward finishes it and is advanced from the main thread (`progress_mean_s` of it inside backward, the rest in "
    "the wait), up to 2 buckets in flight at once, so it is time in flight, not busy time; in none mode the allreduces "
    "one after another after backward. `exposed_comm_mean_s` = the wait after backward (+ local-SGD averaging) = "
    "`exposed_wait_peers_mean_s` (until every rank had finished backward: waiting for the slowest peer) + "
    "`exposed_after_ready_mean_s` (communication after all were ready); `reference_comm_s` = the same buckets "
    "allreduced **without** overlap in the same run, after a barrier (trace attribute `reference_iterations`); "
    "`hidden_fraction` = 1 − exposed / reference: the share of a no-overlap allreduce that overlapping hid, n/a with "
    "one rank (nothing to hide). Negative: overlapping cost more than it hid (the transfers slowed down competing "
    "with backward for the cores, or peers arrived late).")
# The definition in reports of traces without the overlap modes (all ran with a communication thread).
LEGACY_HIDDEN_DEFINITION = (
    "`comm_mean_s` = the communication thread's busy time per step = `peers_mean_s` (handshake wait until every "
    "rank had the bucket ready) + `transfer_mean_s` (the allreduce calls); `exposed_comm_mean_s` = the wait after "
    "backward (+ local-SGD averaging); `reference_comm_s` = the same buckets allreduced **without** overlap in the "
    "same run, after a barrier (trace attribute `reference_iterations`); `hidden_fraction` = 1 − exposed / "
    "reference: the share of a no-overlap allreduce that overlapping hid. Negative: overlapping cost more than it "
    "hid (the transfers slowed down competing with backward for the cores, or peers arrived late).")


def has_reference(trace: Trace) -> bool:
    """True when the engine measured each case's no-overlap allreduce in the run (hidden_fraction is defined)."""
    cases = trace.table("cases")
    return "hidden_fraction" in cases and cases["hidden_fraction"].notna().any()


def has_modes(trace: Trace) -> bool:
    """True for a trace written with the overlap modes (root attribute ``overlap_mode``)."""
    return "overlap_mode" in trace.attrs


def comm_columns(trace: Trace) -> list[str]:
    """The communication columns of the cases table this trace has (older traces lack the split).

    None for a ``--no-comm`` run; the hidden fraction (and a reference that was not measured) left
    out of a trace with the overlap modes where it is NaN throughout (one rank, local SGD).
    """
    if no_comm(trace):
        return []
    wanted = ("comm_mean_s", "peers_mean_s", "transfer_mean_s", "progress_mean_s", "exposed_comm_mean_s",
              "exposed_wait_peers_mean_s", "exposed_after_ready_mean_s", "reference_comm_s", "hidden_fraction")
    cases = trace.table("cases")
    present = [c for c in wanted if c in cases]
    if has_modes(trace):
        present = [c for c in present if c not in ("reference_comm_s", "hidden_fraction") or cases[c].notna().any()]
    return present


def communication_lines(trace: Trace) -> list[str]:
    """How this run communicated: the overlap mode and its reason (traces with the overlap modes only)."""
    a = trace.attrs
    if no_comm(trace):
        return ["Communication: **no communication (--no-comm)**: every rank trained alone, the same-load baseline a "
                "data-parallel run is measured against (no buckets, no exposed communication, no hidden fraction).", ""]
    if not has_modes(trace):
        return []
    cpu = int(a.get("comm_cpu", -1))
    where = f", communication thread on CPU {cpu}" if cpu >= 0 else ""
    local = f"; local SGD: parameters averaged every {a['local_sgd']} step(s)" if int(a.get("local_sgd", 0)) else ""
    return [f"Communication: overlap mode **{a['overlap_mode']}**{where} (`overlap_reason`: {a.get('overlap_reason', '?')})"
            f"{local}.", ""]


def _no_hidden_note(trace: Trace) -> str:
    """Why the cases table has no hidden fraction (empty when it has one)."""
    if has_reference(trace):
        return ""
    if not has_modes(trace):
        return " (This trace predates that measurement: no hidden fraction.)"
    if no_comm(trace):
        return "(No communication (--no-comm): no hidden fraction.)"
    if trace.nranks == 1:
        return " (One rank: nothing to hide, hidden fraction n/a.)"
    if int(trace.attrs.get("local_sgd", 0)):
        return " (Local SGD: no gradient allreduce, hidden fraction n/a.)"
    return " (No hidden fraction in this trace.)"


def _shard_note(trace: Trace) -> str:
    """What the communication columns mean in a sharded run (--shard; empty otherwise)."""
    level = str(trace.attrs.get("shard", "none"))
    if level == "none":
        return ""
    return (f" Sharded (`--shard {level}`): each bucket is a reduce-scatter, not an allreduce, and the exposed "
            "communication includes the parameters' all-gather after the optimizer (`all_gather` in the phase "
            f"summary); each rank holds at most {trace.attrs.get('shard_numel_max')} parameters' optimizer state.")


def _engine_tables(trace: Trace) -> list[str]:
    """Cases, breakdown, bucket caps, overlap and contention of a train trace from the data-parallel engine."""
    cases = cases_table(trace)
    rate = [c for c in cases.columns if c.endswith("_per_s") and c != "samples_per_s"]
    view = cases[["label", "buckets", "steps", "iteration_mean_s", "iteration_median_s", "iteration_min_s",
                  "compute_mean_s", *comm_columns(trace), "compute_imbalance", "slowest_rank", "samples_per_s",
                  *rate, "best"]]
    view = seconds_to_ms(view, [c for c in view.columns if c.endswith("_s") and not c.endswith("_per_s")])
    view = view.assign(best=view["best"].map({True: "★", False: ""}))
    bd = breakdown_table(trace)
    columns = [col for _, col in breakdown_components([trace])]
    bd_view = seconds_to_ms(bd[["label", "steps", *columns, "iteration_s", "sum_s"]], [*columns, "iteration_s", "sum_s"])
    bd_view = bd_view.rename(columns={"exposed_ms": "exposed_ms (wait+average)",
                                      "after_ready_ms": "after_ready_ms (wait+average−wait_peers)"})
    if has_split(trace):
        bd_text = ("Mean over summarised steps of the **slowest rank's** phases in each step, so the components add up "
                   "to the time per iteration (`sum_ms` vs `iteration_ms`): `progress_ms` = communication inside "
                   "backward (progress mode's calls that advanced the buckets, taken out of `backward_ms`; 0 in the "
                   "other modes), `exposed_wait_peers_ms` = waiting for the slowest peer's backward, `after_ready_ms` = "
                   "exposed communication after all were ready (the timed wait + average less the wait for peers).")
    else:
        bd_text = ("Mean over summarised steps of the **slowest rank's** phases in each step, so the components add "
                   "up to the time per iteration (`sum_ms` vs `iteration_ms`).")
    best = cases.loc[cases.groupby("algorithm", sort=False)["iteration_mean_s"].idxmin()] \
        if cases["iteration_mean_s"].notna().any() else cases.iloc[0:0]
    hidden = ["reference_comm_s", "hidden_fraction"] if has_reference(trace) else []
    best_view = seconds_to_ms(best[["algorithm", "bucket_cap", "buckets", "iteration_mean_s", "exposed_comm_mean_s",
                                    *hidden]], ["iteration_mean_s", "exposed_comm_mean_s", *hidden[:1]])
    excluded = trace.attrs.get("summary_excludes", "first step excluded")
    mode = trace.attrs.get("overlap_mode", "thread")
    if no_comm(trace):
        cpu_text = "no communication: `comm_cpu_wall` n/a."
    elif mode == "progress":
        cpu_text = ("no communication thread: `comm_cpu_wall` = the time in the main thread's calls that advanced the "
                    "buckets ÷ the buckets' time in flight.")
    elif mode == "none":
        cpu_text = "no communication thread (overlap none: the allreduces run on the main thread): `comm_cpu_wall` n/a."
    else:
        cpu_text = ("the communication thread's CPU counts in the process CPU, so values above 1 are possible. "
                    "`comm_cpu_wall` = that thread's CPU / allreduce wall time.")
    definition = ("" if no_comm(trace) else HIDDEN_DEFINITION) if has_modes(trace) else LEGACY_HIDDEN_DEFINITION
    return [*communication_lines(trace), f"#### Cases (algorithm × bucket cap): {trace.attrs.get('scaling', '?')} scaling, global batch "
            f"{trace.attrs.get('global_batch', '?')}, {trace.attrs.get('num_cases', len(cases))} case(s) cycled step by step",
            "", f"Iteration time = the slowest rank's step time, over the summarised steps ({excluded}); compute, "
            "communication and exposed communication are means over steps and ranks. " + definition
            + _no_hidden_note(trace) + _shard_note(trace) + " ★ = fastest case.", "", markdown_table(view), "",
            "#### Per-iteration latency breakdown (figure: breakdown)", "", bd_text, "", markdown_table(bd_view), "",
            "#### Bucket cap sweep (figures: bucket_caps, hidden)", "",
            "Best cap per algorithm (lowest time per iteration):", "", markdown_table(best_view), "",
            "#### Contention indicator (figure: contention): process CPU / (wall × compute threads)", "",
            "Per rank and case over the summarised steps. Below 1 the rank's threads waited (blocked, or runnable "
            "on a busy core); " + cpu_text, "",
            markdown_table(step_contention(trace)), ""]


def report_tables(trace: Trace) -> list[str]:
    """A trainer run: the engine's tables (if any), where a step's time goes, and every step."""
    lines = _engine_tables(trace) if has_engine_tables(trace) else []
    lines += train_pipeline.report_lines(trace)
    lines += ["#### Step-phase profile", "",
              f"Mean, median and fastest wall time per step and each phase's share; "
              f"{trace.attrs.get('summary_excludes', 'the first step')} is excluded.", "",
              markdown_table(trace.table("summary")), ""]
    if "steps" in trace.tables:
        steps = trace.table("steps")
        cols = [c for c in ("step", "loss", "val_loss", "lr", "grad_norm", "step_wall_s", "step_process_cpu_s",
                            "tokens_per_s") if c in steps.columns]
        lines += ["#### Steps", "", markdown_table(steps[cols]), ""]
    return lines
