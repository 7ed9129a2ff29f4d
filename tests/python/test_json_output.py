"""--json FILE on allreduce_perf and bucket_sweep (core/trace/json_report.hpp): every row of the printed
table has a JSON row with the same case and the same numbers (within the table's rounding), the
JSON carries its schema, units and provenance, and a bad path is a one-line error (exit 2) that
leaves no file."""
from __future__ import annotations

import json
import math
import subprocess

import pytest

from helpers import TINY_LAYOUT, build_dir, mpi_env, need_binary

UNITS = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def size_bytes(text: str) -> int:
    return int(text[:-1]) * UNITS[text[-1]] if text[-1] in UNITS else int(text)


def run(binary: str, *args: str) -> subprocess.CompletedProcess:
    exe = build_dir() / "bin" / binary
    need_binary(exe)
    return subprocess.run(["mpirun", "-np", "2", str(exe), *args], capture_output=True, text=True, timeout=300,
                          env=mpi_env())


def table_rows(stdout: str) -> list[list[str]]:
    return [line.split() for line in stdout.splitlines() if line.strip() and not line.startswith("#")]


def close(printed: str, value: float, decimals: int) -> bool:
    return abs(float(printed) - value) <= 0.5 * 10 ** -decimals + 1e-12


def test_allreduce_json_rows_equal_the_table(tmp_path):
    out = tmp_path / "ar.json"
    proc = run("allreduce_perf", "--sizes", "8,1K,64K", "-a", "all", "-d", "f32,bf16", "--placement", "both", "-n", "5",
               "--no-membw", "-o", str(tmp_path / "ar.h5"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == "scaleprobe-json" and doc["schema_version"] == 1 and doc["kind"] == "allreduce"
    assert doc["trace"] == str(tmp_path / "ar.h5")
    assert doc["provenance"]["run"]["program"] == "allreduce_perf" and doc["provenance"]["run"]["nranks"] == "2"
    summary = doc["tables"]["summary"]
    assert summary["columns"]["t_mean_us"]["unit"] == "us" and summary["columns"]["bytes"]["unit"] == "B"
    rows, printed = summary["rows"], table_rows(proc.stdout)
    # mpi naive tree ring rabenseifner doubling shm shm-seg hier
    assert len(rows) == len(printed) == 3 * 2 * 2 * 9
    for row, p in zip(rows, printed):
        size, count, dtype, op, ip, alg, iters = p[:7]
        assert (size_bytes(size), int(count), dtype, op, ip, alg, int(iters)) == (
            row["bytes"], row["count"], row["dtype"], row["op"], row["placement"], row["algorithm"], row["iters"]), p
        for text, key in zip(p[7:12], ("t_min_us", "t_mean_us", "t_max_us", "p50_us", "p99_us")):
            assert close(text, row[key], 2), (p, key, row[key])
        assert close(p[12], row["algbw_GBps"], 3) and close(p[13], row["busbw_GBps"], 3), p
        assert (p[15] == "-") == (row["vs_mpi"] is None), p
        if row["vs_mpi"] is not None:
            assert close(p[15], row["vs_mpi"], 2), p
        assert int(p[16]) == row["wrong"] == 0


def test_bucket_sweep_json_rows_equal_the_table(tmp_path):
    out = tmp_path / "bs.json"
    layout = tmp_path / "tiny.txt"  # 6 tensors, 2.2 MiB: every row is checked, none needs resnet50's 100 MB
    layout.write_text(TINY_LAYOUT)
    proc = run("bucket_sweep", "--layout", str(layout), "-c", "tensor,1,all", "-a", "ring,mpi", "-n", "2",
               "-o", str(tmp_path / "bs.h5"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["kind"] == "bucket_sweep" and set(doc["tables"]) == {"summary", "buckets"}
    rows, printed = doc["tables"]["summary"]["rows"], table_rows(proc.stdout)
    assert len(rows) == len(printed) == 6
    for row, p in zip(rows, printed):
        assert (p[0], p[1], int(p[2])) == (row["algorithm"], row["cap"], row["buckets"]), p
        for text, key in zip(p[3:8], ("t_min_us", "t_mean_us", "t_max_us", "p50_us", "p99_us")):
            assert close(text, row[key] / 1e3, 3), (p, key)  # the table prints ms
        assert close(p[9], row["busbw_GBps"], 3) and int(p[11]) == row["wrong"] == 0, p
    buckets = doc["tables"]["buckets"]["rows"]
    assert sum(1 for b in buckets if b["case"] == 0) == rows[0]["buckets"]
    assert all(math.isfinite(b["t_mean_us"]) for b in buckets)


@pytest.mark.parametrize("where, message", [("dir", "is a directory"), ("missing/x.json", "no folder")])
def test_bad_json_path_is_a_one_line_error(tmp_path, where, message):
    path = tmp_path if where == "dir" else tmp_path / where
    proc = run("allreduce_perf", "--sizes", "8", "-n", "1", "--no-membw", "-o", str(tmp_path / "t.h5"),
               "--json", str(path))
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and message in errors[0], proc.stderr
    assert not (tmp_path / "t.h5").exists() and not list(tmp_path.glob("*.partial"))
