"""The p2p kind (python/scaleprobe_analysis/p2p.py) on traces of the real p2p_perf: two passes of a
pair and one run of two pairs make a campaign whose report has the cross-point section, each
trace's table and figures; compare matches cases by (test, bytes, window). Expected values are read
from the raw HDF5 tables with h5py, not through the package."""
from __future__ import annotations

import subprocess

import h5py
import pytest

from helpers import build_dir, markdown_rows, mpi_env, mpi_traces, need_binary, report_section, run_cli


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    return mpi_traces(tmp_path_factory.mktemp("p2p") / "c", build_dir() / "bin" / "p2p_perf",
                      ((2, "p2p_N1_t2_c1_p1"), (2, "p2p_N1_t2_c1_p2"), (4, "p2p_N1_t4_c1")),
                      "-b", "4", "-e", "4K", "-f", "32", "-n", "5", "-q")


def test_report_has_the_sweep_section_and_every_traces_table(campaign, tmp_path):
    out, text, rows = report_section(campaign, tmp_path, "## p2p across points",
                                     "| point | ranks | test | bytes | passes | latency_us | bandwidth_GBps |")
    with h5py.File(campaign / "p2p_N1_t4_c1.h5") as f:
        cases = len(f["summary/test"])
        latency = {int(b): float(v) for t, b, v in zip(f["summary/test"], f["summary/bytes"], f["summary/latency_us"])
                   if t == b"latency"}
    assert len(rows) == 2 * cases  # two points, every case of each
    two_pairs = {int(r["bytes"]): float(r["latency_us"]) for r in rows if r["ranks"] == "4" and r["test"] == "latency"}
    assert two_pairs == pytest.approx(latency, rel=1e-3)  # one pass: the median is that pass's value
    assert sum(r["passes"] == "2" for r in rows) == cases  # the pair ran twice
    figures = {p.name for p in (out / "figures").glob("*.png")}
    assert any(n.endswith("p2p_by_point.png") for n in figures)
    assert {"p2p_N1_t2_c1_p1-p2p_latency.png", "p2p_N1_t2_c1_p1-p2p_bandwidth.png"} <= figures
    assert text.count("#### Point-to-point (figures: p2p_latency, p2p_bandwidth)") == 3


def test_compare_matches_cases_by_test_size_and_window(campaign):
    proc = run_cli("compare", str(campaign / "p2p_N1_t2_c1_p1.h5"), str(campaign / "p2p_N1_t2_c1_p2.h5"))
    assert proc.returncode == 0, proc.stderr
    rows = markdown_rows(proc.stdout, "| test | size | window |")
    with h5py.File(campaign / "p2p_N1_t2_c1_p1.h5") as f:
        want = [(t.decode(), int(w)) for t, w in zip(f["summary/test"], f["summary/window"])]
    assert [(r["test"], int(r["window"])) for r in rows] == want


def test_every_pair_alone_gives_the_matrices(tmp_path):
    """--pairs each at 3 ranks: a case per (test, size, pair), and the report's matrices hold each pair's
    value at the smallest (latency) and largest (bw) size in both of its cells."""
    exe = build_dir() / "bin" / "p2p_perf"
    need_binary(exe)
    trace = tmp_path / "pairs.h5"
    proc = subprocess.run(["mpirun", "-np", "3", str(exe), "--pairs", "each", "-t", "latency,bw", "-b", "4", "-e", "4K",
                           "-f", "32", "-n", "5", "-q", "-o", str(trace)], capture_output=True, text=True, timeout=120,
                          env=mpi_env())
    assert proc.returncode == 0, proc.stderr
    with h5py.File(trace) as f:
        assert f.attrs["pair_mode"] == b"each" or f.attrs["pair_mode"] == "each"
        s = {k: list(f[f"summary/{k}"]) for k in ("test", "bytes", "rank_a", "rank_b", "latency_us", "bandwidth_GBps")}
    assert sorted({(int(a), int(b)) for a, b in zip(s["rank_a"], s["rank_b"])}) == [(0, 1), (0, 2), (1, 2)]
    want = {"latency": {}, "bw": {}}
    for t, n, a, b, lat, bw in zip(*s.values()):
        if (t == b"latency" and n == 4) or (t == b"bw" and n == 4096):
            want[t.decode()][(int(a), int(b))] = float(lat if t == b"latency" else bw)
    out = tmp_path / "report"
    proc = run_cli("report", str(trace), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    text = (out / "report.md").read_text()
    assert (out / "figures" / "pairs-p2p_pairs.png").exists()
    for test, title in (("latency", "one-way latency (µs), 4-byte messages"), ("bw", "bw bandwidth (GB/s), 4K-byte messages")):
        rows = markdown_rows(text.split(f"#### Every pair: {title}")[1], "| rank |")
        assert [r["rank"].split()[0] for r in rows] == ["0", "1", "2"]
        for (a, b), v in want[test].items():
            cells = [rows[a][next(c for c in rows[a] if c.startswith(f"{b} "))],
                     rows[b][next(c for c in rows[b] if c.startswith(f"{a} "))]]
            assert [float(c) for c in cells] == pytest.approx([v, v], rel=1e-3), (test, a, b)
