"""How much of the allreduce the data-parallel runs hid behind backward, per bucket cap and pass.

Read from scaleprobe's own multi-rank data-parallel traces of a campaign (raw/ddp_np<n>_p<k>.h5 and
raw/strong_np<n>_p<k>.h5, n > 1): per case the exposed wait after backward (`exposed_comm_mean_s`),
the same buckets' allreduce without overlap measured in the same run (`reference_comm_s`) and
`hidden_fraction` = 1 - exposed / reference (negative: overlapping cost more than it hid). PyTorch
DDP reports no such reference, so this table has no peer column.
"""
from __future__ import annotations

import re
import statistics
from pathlib import Path

from scaleprobe_analysis.h5open import open_h5

from .runs import text

NAME = re.compile(r"(ddp|strong)_np(\d+)_p(\d+)\.h5$")
TITLE = "Overlap in scaleprobe's data-parallel runs (exposed wait vs the same buckets without overlap)"


def overlap_rows(raw: Path) -> list[dict]:
    """One row per (run, ranks, cap) with every pass's exposed, reference and hidden fraction."""
    groups: dict[tuple[str, int, str], list[tuple[int, float, float, float]]] = {}
    for path in sorted(raw.glob("*_np*_p*.h5")):
        m = NAME.search(path.name)
        if not m or int(m.group(2)) < 2:
            continue
        with open_h5(path) as f:
            c = f["cases"]
            for cap, exposed, ref, hidden in zip(c["bucket_cap"][()], c["exposed_comm_mean_s"][()],
                                                 c["reference_comm_s"][()], c["hidden_fraction"][()]):
                key = (m.group(1), int(m.group(2)), text(cap))
                groups.setdefault(key, []).append((int(m.group(3)), float(exposed), float(ref), float(hidden)))
    rows = []
    for (run, ranks, cap), passes in groups.items():
        passes.sort()
        rows.append({"run": "weak" if run == "ddp" else "strong", "ranks": ranks, "cap": cap,
                     "exposed_ms": [e * 1e3 for _, e, _, _ in passes], "reference_ms": [r * 1e3 for _, _, r, _ in passes],
                     "hidden": [h for *_, h in passes]})
    return rows


def overlap_markdown(raw: Path, level: str = "##") -> str:
    rows = overlap_rows(raw)
    if not rows:
        return ""
    lines = [f"{level} {TITLE}", "",
             "Exposed = the wait after backward; reference = the same buckets allreduced without overlap after "
             "a barrier in the same run; hidden = 1 − exposed / reference per pass (negative: overlapping cost "
             "more than it hid — the transfers competed with backward for the cores, or a rank's backward "
             "finished later than its peer's, which the reference, after a barrier, excludes). Medians and "
             "every pass.", "",
             "| run | ranks | cap MiB | exposed ms (median) | reference ms (median) | hidden median | [min, max] | every pass |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        h = r["hidden"]
        lines.append(f"| {r['run']} | {r['ranks']} | {r['cap']} | {statistics.median(r['exposed_ms']):.3g} | "
                     f"{statistics.median(r['reference_ms']):.3g} | {statistics.median(h):.2f} | "
                     f"[{min(h):.2f}, {max(h):.2f}] | {', '.join(f'{x:.2f}' for x in h)} |")
    return "\n".join(lines) + "\n"
