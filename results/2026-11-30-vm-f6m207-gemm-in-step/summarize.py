"""gpt-tiny's GEMMs and attention in the step (gpt_train --profile-kernels) against the same kernels
at the same shapes in bench_kernels, per pass (measure.sh). The bench's equivalent of one step:
per block (4) the qkv (C -> 3C), attention projection (C -> C), fc (C -> 4C) and fc projection
(4C -> C) matmuls, plus the LM head (C -> V = C), forward and backward (each backward with its
input gradient, as every one in the step has); attention forward and backward once per block.
    /usr/bin/python3 summarize.py raw > summary.md
"""
import json
import re
import sys
from pathlib import Path
from statistics import median

LAYERS = 4
C, V = 256, 256
MATMULS = [(C, 3 * C)] * LAYERS + [(C, C)] * LAYERS + [(C, 4 * C)] * LAYERS + [(4 * C, C)] * LAYERS + [(C, V)]
ROW = re.compile(r"^#\s+(\w+)\s+([\d.]+)\s+([\d.]+)\s+")
STEP = re.compile(r"kernel profile, rank 0, \d+ steps of ([\d.]+) ms")


def bench_ms(path: Path) -> dict:
    """name -> ms per call (real time) from a Google Benchmark JSON file."""
    out = {}
    for b in json.loads(path.read_text())["benchmarks"]:
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0}[b["time_unit"]]
        out[b["name"].replace("/real_time", "")] = b["real_time"] * unit
    return out


def step_ms(path: Path) -> dict:
    """kernel -> ms per step from gpt_train's kernel profile lines."""
    out = {}
    for line in path.read_text().splitlines():
        m, step = ROW.match(line), STEP.search(line)
        if m:
            out[m.group(1)] = float(m.group(3))
        if step:
            out["(step)"] = float(step.group(1))
    return out


def main(raw: Path) -> None:
    rows = []
    for bench_file in sorted(raw.glob("bench-p*.json")):
        p = bench_file.stem.split("-p")[1]
        bench, step = bench_ms(bench_file), step_ms(raw / f"gpt-p{p}.log")
        for kernel, name, count in (("matmul_forward", "BM_matmul_forward", None),
                                    ("matmul_backward", "BM_matmul_backward", None),
                                    ("attention_forward", "BM_attention_forward/64", LAYERS),
                                    ("attention_backward", "BM_attention_backward/64", LAYERS)):
            warm = (sum(bench[f"{name}/{a}/{b}"] for a, b in MATMULS) if count is None else count * bench[name])
            rows.append((p, kernel, step[kernel], warm))
    print("CPU and times: see measure.log's first and last lines.\n")
    print("| pass | kernel | in the step (ms) | bench, warm (ms) | step / bench |")
    print("|---|---|---|---|---|")
    for p, kernel, s, w in rows:
        print(f"| {p} | {kernel} | {s:.2f} | {w:.2f} | {s / w:.3f} |")
    print("\n| kernel | median step / bench | range | median ms in the step beyond the bench |")
    print("|---|---|---|---|")
    total = 0.0
    for kernel in dict.fromkeys(k for _, k, _, _ in rows):
        mine = [(s, w) for _, k, s, w in rows if k == kernel]
        ratios = [s / w for s, w in mine]
        extra = median(s - w for s, w in mine)
        total += extra
        print(f"| {kernel} | {median(ratios):.3f} | {min(ratios):.3f}–{max(ratios):.3f} | {extra:.2f} |")
    steps = [step_ms(f)["(step)"] for f in sorted(raw.glob("gpt-p*.log"))]
    print(f"\nSum of the medians beyond the bench: {total:.2f} ms per step; the step: "
          f"{', '.join(f'{s:.2f}' for s in steps)} ms (median {median(steps):.2f}).")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
