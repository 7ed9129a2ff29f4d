"""summary.md from raw/*.h5: each stage's peak activation bytes under GPipe and 1F1B (the traces'
`pipeline` table, the most over steps), their ratio, and the bound S/M that issue 32 sets for M > S.
Usage (from this folder): PYTHONPATH=../../python /usr/bin/python3 summarize.py > summary.md"""
from __future__ import annotations

from pathlib import Path

from scaleprobe_analysis.h5open import open_h5  # the one safe open


def peaks(path: Path) -> tuple[dict, dict[int, tuple[int, int]]]:
    """The trace's identity and, per stage (one replica: rank = stage), its most micro-batches and bytes held."""
    with open_h5(path) as f:
        table = f["pipeline"]
        most: dict[int, tuple[int, int]] = {}
        for rank, micro, held in zip(table["rank"][()], table["micro_batches_held"][()], table["activation_bytes"][()]):
            old = most.get(int(rank), (0, 0))
            most[int(rank)] = (max(old[0], int(micro)), max(old[1], int(held)))
        prov = f["provenance"].attrs
        ident = {"git_revision": prov["git_revision"].decode(), "cpu_model": prov["cpu_model"].decode()}
    return ident, most


print("| S | M | stage | GPipe micro-batches | GPipe bytes | 1F1B micro-batches | 1F1B bytes | 1F1B / GPipe | bound S/M | within |")
print("|---|---|---|---|---|---|---|---|---|---|")
for stages in (2, 4):
    micro = 2 * stages + 1
    attrs, gpipe = peaks(Path(f"raw/S{stages}_M{micro}_gpipe.h5"))
    _, onef = peaks(Path(f"raw/S{stages}_M{micro}_1f1b.h5"))
    for s in sorted(gpipe):
        ratio, bound = onef[s][1] / gpipe[s][1], stages / micro
        print(f"| {stages} | {micro} | {s} | {gpipe[s][0]} | {gpipe[s][1]} | {onef[s][0]} | {onef[s][1]} | "
              f"{ratio:.3f} | {bound:.3f} | {'yes' if ratio <= bound + 1e-12 else 'NO'} |")
print()
print(f"Traces: git revision {attrs['git_revision']}, CPU {attrs['cpu_model']}.")
