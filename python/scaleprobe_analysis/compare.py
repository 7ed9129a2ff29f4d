"""Compare two campaigns (or two traces) case by case, with a noise-aware verdict.

**Pairing traces.** Two single files are compared with each other. Two campaign folders are
paired by the trace's path below the folder (``sweep/bucket_sweep.h5`` with
``sweep/bucket_sweep.h5``); traces left over are paired by kind when exactly one of that kind
is left on each side. Anything still unpaired is listed.

**Matching rows.** Cases are matched by the key their kind's module gives (``CASE_KEYS``, see
``kinds.py``): allreduce by (algorithm, dtype, op, placement, bytes); bucket_sweep by (layout,
algorithm, cap), the layout coming from the root attribute ``layout``; trainer runs (kind
``train`` with the engine's ``cases`` table) by (model, ranks, global batch, algorithm, bucket
cap), the statistic being the iteration time (slowest rank) in µs and the samples each
summarised step's slowest-rank step time. Rows present on one side only are listed as unmatched.

**Change.** ``change`` = new / base − 1 of the chosen summary column (``t_mean_us`` by
default, ``p50_us`` with ``--stat p50_us``); positive is slower.

**Verdict (noise-aware).** Each side's per-iteration samples of the case's phase are reduced
to the slowest rank's time per iteration (what the collective costs; the kind module's
``iteration_times``).
The ratio of the two medians, new / base, gets a 95 % percentile *bootstrap* interval:
both sides are resampled with replacement independently, ``RESAMPLES`` times, with a fixed
seed so the output is reproducible. Medians, because a shared machine throws occasional
very slow iterations that would dominate a mean. Then

- **regression**: ``change`` > threshold *and* the interval lies wholly above 1;
- **improvement**: ``change`` < −threshold *and* the interval lies wholly below 1;
- **within noise**: otherwise: the change is smaller than the threshold (the minimum effect
  worth reporting) or the samples cannot tell it from run-to-run spread;
- **too few samples**: fewer than ``MIN_SAMPLES`` iterations on a side; never a regression.

So a difference must be both large (threshold) and clear of the spread (interval) to count.
The interval only knows the spread *within* each run; two runs on a shared machine can differ
by more than that (another job, a different core placement). Choose the threshold from the
differences seen between repeated runs of the same build, not below them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .campaign import Campaign, trace_stem
from .kinds import module_for
from .textfmt import format_bytes, markdown_table
from .trace import Trace, TraceError

STATS = ("t_mean_us", "p50_us")
RESAMPLES = 2000
LEVEL = 0.95
MIN_SAMPLES = 3
SEED = 20261122
REGRESSION, IMPROVEMENT, NOISE, FEW = "regression", "improvement", "within noise", "too few samples"


@dataclass
class PairResult:
    """The comparison of one pair of traces."""

    base: str
    new: str
    kind: str
    rows: pd.DataFrame  # key columns, base, new, change, ratio_lo, ratio_hi, n_base, n_new, verdict
    unmatched: pd.DataFrame  # key columns and 'only_in' ('base' or 'new')
    notes: list[str] = field(default_factory=list)


@dataclass
class Comparison:
    stat: str
    threshold: float
    pairs: list[PairResult]
    unpaired: list[str]  # traces with no partner, as 'base: <stem> (kind)'

    def count(self, verdict: str) -> int:
        return sum(int((p.rows["verdict"] == verdict).sum()) for p in self.pairs)


def bootstrap_median_ratio(base: np.ndarray, new: np.ndarray, seed: int = SEED,
                           resamples: int = RESAMPLES, level: float = LEVEL) -> tuple[float, float]:
    """Percentile bootstrap interval of median(new) / median(base)."""
    rng = np.random.default_rng(seed)
    b = np.median(rng.choice(base, (resamples, len(base))), axis=1)
    n = np.median(rng.choice(new, (resamples, len(new))), axis=1)
    lo, hi = np.quantile(n / b, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def verdict(change: float, lo: float, hi: float, threshold: float) -> str:
    """The rule in the module docstring."""
    if change > threshold and lo > 1:
        return REGRESSION
    if change < -threshold and hi < 1:
        return IMPROVEMENT
    return NOISE


def _iteration_samples(trace: Trace) -> dict[int, np.ndarray]:
    per_iter = module_for(trace.kind).iteration_times(trace)
    return {int(case): part["wall_us"].to_numpy() for case, part in per_iter.groupby("case")}


def compare_traces(base: Trace, new: Trace, stat: str = "t_mean_us", threshold: float = 0.05,
                   base_label: str | None = None, new_label: str | None = None) -> PairResult:
    """Match the summary rows of two traces of one kind and judge each matched row."""
    if base.kind != new.kind:
        raise ValueError(f"cannot compare a {base.kind} trace with a {new.kind} trace")
    module = module_for(base.kind)
    if module is None:
        raise ValueError(f"no comparison key for kind '{base.kind}'")
    keys = list(module.CASE_KEYS)
    left, right = module.case_table(base), module.case_table(new)
    merged = left[keys + ["case", stat]].merge(right[keys + ["case", stat]], on=keys, how="outer",
                                               suffixes=("_base", "_new"), indicator=True)
    both = merged[merged["_merge"] == "both"]
    base_samples, new_samples = _iteration_samples(base), _iteration_samples(new)
    rows = []
    for r in both.itertuples(index=False):
        r = r._asdict()
        b = base_samples.get(int(r["case_base"]), np.array([]))
        n = new_samples.get(int(r["case_new"]), np.array([]))
        change = r[f"{stat}_new"] / r[f"{stat}_base"] - 1
        if len(b) < MIN_SAMPLES or len(n) < MIN_SAMPLES:
            lo = hi = float("nan")
            judged = FEW
        else:
            lo, hi = bootstrap_median_ratio(b, n)
            judged = verdict(change, lo, hi, threshold)
        rows.append({**{k: r[k] for k in keys}, "base": r[f"{stat}_base"], "new": r[f"{stat}_new"],
                     "change": change, "ratio_lo": lo, "ratio_hi": hi, "n_base": len(b), "n_new": len(n),
                     "verdict": judged})
    table = pd.DataFrame(rows, columns=keys + ["base", "new", "change", "ratio_lo", "ratio_hi", "n_base",
                                               "n_new", "verdict"])
    lone = merged[merged["_merge"] != "both"]
    unmatched = lone[keys].assign(only_in=np.where(lone["_merge"] == "left_only", "base", "new"))
    notes = []
    if base.nranks != new.nranks:
        notes.append(f"rank counts differ: base {base.nranks}, new {new.nranks}")
    if base.machine != new.machine:
        notes.append(f"machines differ: base '{base.machine}', new '{new.machine}'")
    for side, t in (("base", base), ("new", new)):
        if t.simulated:
            notes.append(f"{side} holds SIMULATED/MODELLED data (root attribute simulated = {t.attrs.get('simulated')})")
    return PairResult(base_label or str(base.path), new_label or str(new.path), base.kind, table,
                      unmatched.reset_index(drop=True), notes)


def pair_traces(base: Campaign, new: Campaign) -> tuple[list[tuple[Trace, Trace]], list[str]]:
    """Pair by path below the campaign root, then by kind where one of a kind is left per side."""
    if len(base.traces) == 1 and len(new.traces) == 1:
        return [(base.traces[0], new.traces[0])], []
    left = {trace_stem(base.root, t): t for t in base.traces}
    right = {trace_stem(new.root, t): t for t in new.traces}
    pairs = [(left.pop(s), right.pop(s)) for s in sorted(set(left) & set(right))]
    for kind in sorted({t.kind for t in left.values()}):
        ls = [s for s, t in left.items() if t.kind == kind]
        rs = [s for s, t in right.items() if t.kind == kind]
        if len(ls) == 1 and len(rs) == 1:
            pairs.append((left.pop(ls[0]), right.pop(rs[0])))
    unpaired = [f"base: {s} ({t.kind})" for s, t in left.items()] + [f"new: {s} ({t.kind})" for s, t in right.items()]
    return pairs, unpaired


def environment_difference(base: Trace, new: Trace) -> str:
    """The kernel-relevant variables (Trace.kernel_env) that differ between two traces, '' if none."""
    a, b = base.kernel_env, new.kernel_env
    keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return ", ".join(f"{k}: {a.get(k, '(unset)')} vs {b.get(k, '(unset)')}" for k in keys)


def compare_campaigns(base: Campaign, new: Campaign, stat: str = "t_mean_us", threshold: float = 0.05,
                      allow_env_difference: bool = False) -> Comparison:
    """Pairs and compares the traces (module docstring). Two sides that ran under different
    kernel-relevant environments ran different kernels: refused (TraceError naming the variables)
    unless ``allow_env_difference``, which turns it into a note."""
    pairs, unpaired = pair_traces(base, new)
    results = []
    for b, n in pairs:
        if b.kind != n.kind:
            unpaired += [f"base: {trace_stem(base.root, b)} ({b.kind})", f"new: {trace_stem(new.root, n)} ({n.kind})"]
            continue
        if module_for(b.kind) is None:
            continue
        env = environment_difference(b, n)
        if env and not allow_env_difference:
            raise TraceError(n.path, f"ran under another kernel-relevant environment than {b.path} ({env}); "
                                     "compare like with like, or pass --allow-env-difference")
        result = compare_traces(b, n, stat, threshold, str(b.path), str(n.path))
        if env:
            result.notes.append(f"kernel-relevant environment differs: {env}")
        if b.cpu_identity != n.cpu_identity:
            result.notes.append(f"CPUs differ: base {b.cpu_identity}, new {n.cpu_identity}")
        results.append(result)
    return Comparison(stat, threshold, results, unpaired)


def _display(rows: pd.DataFrame, kind: str, stat: str) -> pd.DataFrame:
    keys = [k for k in module_for(kind).CASE_KEYS if not (k == "layout" and rows[k].nunique() <= 1)]
    out = rows[keys].copy()
    if "bytes" in out:
        out.insert(out.columns.get_loc("bytes"), "size", out.pop("bytes").map(format_bytes))
    out[f"base {stat}"] = rows["base"]
    out[f"new {stat}"] = rows["new"]
    out["change"] = rows["change"].map(lambda c: f"{c:+.1%}")
    out["median ratio (95% CI)"] = [f"[{lo:.3f}, {hi:.3f}]" if np.isfinite(lo) else "–"
                                    for lo, hi in zip(rows["ratio_lo"], rows["ratio_hi"])]
    out["iters"] = rows["n_base"].astype(str) + "/" + rows["n_new"].astype(str)
    out["verdict"] = rows["verdict"].map(lambda v: f"**{v}**" if v in (REGRESSION, IMPROVEMENT) else v)
    return out


def render(comparison: Comparison) -> str:
    """The comparison as markdown: one table per trace pair, unmatched rows and a summary line."""
    c = comparison
    lines = [f"# scaleprobe compare: {c.stat}, threshold {c.threshold:.1%}", "",
             "change = new / base − 1 (positive = slower). Verdict: |change| > threshold and the 95% "
             "bootstrap interval of median(new)/median(base) over per-iteration times (slowest rank) "
             "excludes 1; otherwise within noise.", ""]
    for p in c.pairs:
        lines += [f"## {p.kind}: {p.base} → {p.new}", ""]
        lines += [f"> **Note:** {note}" for note in p.notes] + ([""] if p.notes else [])
        lines += [markdown_table(_display(p.rows, p.kind, c.stat)) if len(p.rows) else "No matching rows.", ""]
        if len(p.unmatched):
            un = p.unmatched.copy()
            if "bytes" in un:
                un["bytes"] = un["bytes"].map(format_bytes)
            lines += [f"Unmatched rows ({len(un)}):", "", markdown_table(un), ""]
    if c.unpaired:
        lines += ["Traces without a partner: " + "; ".join(c.unpaired), ""]
    lines.append(f"Summary: {c.count(REGRESSION)} regression(s), {c.count(IMPROVEMENT)} improvement(s), "
                 f"{c.count(NOISE)} within noise, {c.count(FEW)} with too few samples, "
                 f"{sum(len(p.unmatched) for p in c.pairs)} unmatched row(s).")
    return "\n".join(lines) + "\n"
