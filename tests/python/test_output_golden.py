"""The printed table, the JSON rows and the trace layout of allreduce_perf, collective_perf, bucket_sweep and p2p_perf, pinned
against golden files (tests/data/golden/*.txt) with every timing-dependent value masked: column
headers and widths, row order, each case's non-timing fields, table column names, units and
descriptions, trace groups, datasets and attributes. Issue 29 moves both programs onto one
benchmark driver; this says their outputs stayed the same. After an intended change of output,
SCALEPROBE_UPDATE_GOLDEN=1 rewrites the files (review the diff)."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import h5py
import pytest

from helpers import REPO, build_dir, mpi_env, need_binary

GOLDEN = REPO / "tests" / "data" / "golden"
# Values that depend on timing or on the machine: masked, their presence and position kept.
TIMING_COLUMNS = {"t_min_us", "t_mean_us", "t_max_us", "slowest_rank", "p50_us", "p99_us", "cpu_mean_us",
                  "runqueue_wait_us", "algbw_GBps", "busbw_GBps", "vs_mpi", "memory_copy_GBps", "latency_us",
                  "bandwidth_GBps", "message_rate_M"}
MACHINE_ATTRIBUTES = {"finished_utc", "load_average_end", "machine", "memory_copy_GBps", "memory_copy_array_bytes",
                      "memory_copy_flushed", "off_cache_evicted_bytes", "created_utc", "file_digest"}
# Per program: the printed columns (by index) whose values are timings.
PRINTED_TIMING = {"allreduce_perf": range(7, 16), "collective_perf": range(7, 16), "bucket_sweep": range(3, 11),
                  "p2p_perf": range(5, 11)}
CASES = {
    # bucket_sweep's layout: a small file, so the test stays short (tests/data/golden/layout.txt).
    "allreduce_np2": ("allreduce_perf", 2, ["--sizes", "8,1K,64K", "-a", "all", "-d", "f32,bf16", "--placement",
                                            "both", "-n", "3", "-w", "1", "--no-membw"]),
    "allreduce_np3_weak": ("allreduce_perf", 3, ["-b", "4", "-e", "4K", "-f", "8", "-a", "mpi,ring,tree", "-d",
                                                 "i32,f64", "--op", "max", "--scaling", "weak", "--off-cache",
                                                 "--sync", "barrier", "-n", "2", "-w", "0", "--membw-bytes", "64K"]),
    # collective_perf: a block collective at an odd rank count (sizes rounded down to the ranks) and
    # a rooted one off rank 0.
    "reduce_scatter_np3": ("collective_perf", 3, ["-c", "reduce_scatter", "--sizes", "8K,64K", "-a", "all", "-d",
                                                  "f32,i32", "-n", "3", "-w", "1", "--no-membw"]),
    "broadcast_np3": ("collective_perf", 3, ["-c", "broadcast", "--root", "2", "--sizes", "4,1K", "-a", "all", "-d",
                                             "bf16", "-n", "2", "-w", "0", "--no-membw"]),
    "p2p_np4": ("p2p_perf", 4, ["-b", "4", "-e", "64K", "-f", "16", "--window", "8", "-n", "3", "-w", "1"]),
    "bucket_np2": ("bucket_sweep", 2, ["-l", str(GOLDEN / "layout.txt"), "-c", "tensor,1,2,all", "-a", "all", "-n",
                                       "2", "-w", "1", "--print-buckets"]),
    "bucket_np3_weak": ("bucket_sweep", 3, ["-l", str(GOLDEN / "layout.txt"), "-c", "1,all", "-a", "mpi,rabenseifner",
                                            "-d", "bf16", "--scaling", "weak", "--off-cache", "--sync", "barrier", "-n",
                                            "2", "-w", "0"]),
}


def printed(program: str, stdout: str) -> list[str]:
    """Header lines as printed (machine-specific parts masked); each table row as its cells'
    right edges and texts, timings as '*'."""
    out = []
    for line in stdout.splitlines():
        if line.startswith("#"):
            if " host(s) [" in line:  # the hosts and the OpenMP threads are the machine's
                line = re.sub(r"\d+ OpenMP", "* OpenMP", re.sub(r" host\(s\) \[[^]]*\]", " host(s) [*]", line))
            for prefix in ("# MPI:", "# trace:", "# memory copy bandwidth"):
                if line.startswith(prefix):
                    line = prefix + " *"
            out.append(line)
            continue
        cells = [(m.end(), m.group()) for m in re.finditer(r"\S+", line)]
        out.append(" ".join(f"{end}:{'*' if i in PRINTED_TIMING[program] else text}"
                            for i, (end, text) in enumerate(cells)))
    return out


def json_tables(path: Path) -> list[str]:
    doc = json.loads(path.read_text())
    out = [f"schema {doc['schema']} {doc['schema_version']} kind {doc['kind']}",
           f"provenance keys {' '.join(sorted(doc['provenance']))}"]
    for name, table in doc["tables"].items():
        out.append(f"table {name}")
        out += [f"  column {c} [{m.get('unit', '')}] {m.get('description', '')}" for c, m in table["columns"].items()]
        for row in table["rows"]:
            out.append("  row " + " ".join(f"{k}={'*' if k in TIMING_COLUMNS else v}" for k, v in row.items()))
    return out


def trace_layout(path: Path) -> list[str]:
    out = []
    with h5py.File(path, "r") as f:
        def attributes(obj, indent):
            for k in sorted(obj.attrs):
                v = obj.attrs[k]
                v = v.decode() if isinstance(v, bytes) else v
                out.append(f"{indent}@{k} = {'*' if k in MACHINE_ATTRIBUTES else v}")
        attributes(f, "")
        for name in sorted(f):
            if name == "provenance":  # the machine's: test_trace_* check it
                continue
            group = f[name]
            out.append(f"{name}/")
            attributes(group, "  ")
            for col in group:  # written order
                d = group[col]
                head = f"  {col} {d.dtype.kind}{d.dtype.itemsize} {d.shape}"
                attributes(d, "    ")
                if col in TIMING_COLUMNS or name in ("samples", "ranks"):
                    out.append(head)  # shapes only: per-rank values are the machine's
                else:
                    vals = [v.decode() if isinstance(v, bytes) else v for v in d[()].tolist()]
                    out.append(f"{head} = {vals}")
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_matches_golden(case, tmp_path):
    program, ranks, args = CASES[case]
    exe = build_dir() / "bin" / program
    need_binary(exe)
    trace, report = tmp_path / "t.h5", tmp_path / "t.json"
    proc = subprocess.run(["mpirun", "-np", str(ranks), str(exe), *args, "-q", "-o", str(trace), "--json",
                           str(report)], capture_output=True, text=True, timeout=300, env=mpi_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = (["== stdout"] + printed(program, proc.stdout) + ["== json"] + json_tables(report) + ["== trace"]
           + trace_layout(trace))
    got = [line.replace(str(REPO), "<repo>") for line in got]  # the checkout's path: CI clones elsewhere
    golden = GOLDEN / f"{case}.txt"
    if os.environ.get("SCALEPROBE_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text("\n".join(got) + "\n")
    want = golden.read_text().splitlines()
    diff = [f"line {i + 1}: want {w!r}\n          got  {g!r}" for i, (w, g) in enumerate(zip(want, got)) if w != g]
    assert not diff and len(want) == len(got), (f"{case}: output differs from {golden.relative_to(REPO)} "
                                                f"({len(want)} lines golden, {len(got)} now)\n" + "\n".join(diff[:15]))
