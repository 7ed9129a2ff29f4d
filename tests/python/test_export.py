"""`scaleprobe-analyze export`: a JSON row equals the table row of the trace it came from (read with
h5py, not through the package), CSV and JSON hold the same rows, a bad file in the campaign is
listed in the runs table instead of stopping the export, and usage errors are one line."""
from __future__ import annotations

import json
import math
import shutil

import h5py
import pandas as pd
import pytest

from helpers import REPO, run_cli

STORED = REPO / "results" / "2026-11-23-vm-cluster"
TABLE_OF = {"allreduce": "summary", "bucket_sweep": "summary", "train": "cases"}


def h5_rows(path, table):
    with h5py.File(path) as f:
        g = f[table]
        cols = {name: g[name][()] for name in g}
    n = len(next(iter(cols.values())))
    return [{k: (v[i].decode() if isinstance(v[i], bytes) else v[i].item()) for k, v in cols.items()} for i in range(n)]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("export")
    proc = run_cli("export", str(STORED), "-o", str(out / "all.json"))
    assert proc.returncode == 0, proc.stderr
    csv = run_cli("export", str(STORED), "--format", "csv", "-o", str(out / "csv"))
    assert csv.returncode == 0, csv.stderr
    return json.loads((out / "all.json").read_text()), out / "csv"


def test_json_rows_equal_the_trace_rows(exported):
    doc, _ = exported
    assert doc["schema"] == "scaleprobe-export" and doc["version"] == 1
    checked = 0
    for kind, rows in doc["tables"].items():
        by_trace = {}
        for row in rows:
            by_trace.setdefault(row["trace"], []).append(row)
        for stem in sorted(by_trace)[:3]:
            want = h5_rows(STORED / f"{stem}.h5", TABLE_OF[kind])
            got = by_trace[stem]
            assert len(got) == len(want), stem
            for g, w in zip(got, want):
                for key, value in w.items():
                    if isinstance(value, float) and math.isnan(value):
                        assert g[key] is None, (stem, key)
                    else:
                        assert g[key] == value, (stem, key)
                checked += 1
    assert checked > 0 and set(doc["tables"]) == {"allreduce", "bucket_sweep", "train"}


def test_csv_holds_the_same_rows(exported):
    doc, csv_dir = exported
    for kind, rows in doc["tables"].items():
        frame = pd.read_csv(csv_dir / f"{kind}.csv")
        assert len(frame) == len(rows)
        assert list(frame.columns) == list(rows[0])
        first = rows[0]
        assert frame.loc[0, "trace"] == first["trace"]
    runs = pd.read_csv(csv_dir / "runs.csv")
    assert len(runs) == len(doc["runs"]) == 90


def test_bad_file_is_listed_not_fatal(tmp_path):
    camp = tmp_path / "camp"
    camp.mkdir()
    for p in sorted(STORED.glob("allreduce_N1_t1_c1_*.h5"))[:2]:
        shutil.copy(p, camp / p.name)
    (camp / "allreduce_N2_t1_c1_j9.h5").write_bytes(b"not hdf5")
    proc = run_cli("export", str(camp))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert {r["status"] for r in doc["runs"]} >= {"complete", "unreadable"}
    assert len({r["trace"] for r in doc["tables"]["allreduce"]}) == 2


def test_csv_without_output_is_a_usage_error():
    proc = run_cli("export", str(STORED), "--format", "csv")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "needs -o DIR" in proc.stderr
