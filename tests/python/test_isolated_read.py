"""The one verified open (scaleprobe_analysis/h5open.py): a file without a digest is read by libhdf5
only in an isolated child process, so the damaged fuzz regression inputs with their digest block
stripped (schema-1/2 files that crash libhdf5 1.10.8) become one line and a report goes on; a
schema-3 trace without its block is refused; the child returns what an in-process read returns.
About 25 s in all on 2 shared cores, most of it one child process per undigested file (~1 s each)."""
from __future__ import annotations

import atexit
import io
import shutil
import tempfile
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest

from helpers import REPO, run_cli
from scaleprobe_analysis import digest, h5open
from scaleprobe_analysis.trace import TraceError, load_trace, read_image
from synthetic import lognormal_walls, write_allreduce_trace

REGRESSIONS = REPO / "tests" / "fuzz" / "regressions" / "fuzz_trace_reader"
CRASHERS = ("libhdf5-segv-dense-links-v18.h5", "libhdf5-segv-link-iteration.h5")
# Stored traces of the formats before the digest, one per kind and schema era (small ones: each
# read is a child), taken without the block upgrade gave them.
UNDIGESTED = ("2026-11-22-gpt-tiny-vm/gpt-tiny-1thread.h5", "2026-11-23-copy-probe-vm/probe_8M_p1.h5",
              "2026-11-22-bucket-sweep-np2-vm/bert-base-run1.h5")
DIGESTED_V3 = REPO / "results" / "2026-11-25-vm-f25m17-backends" / "allreduce_N2_t2_c1_p2_j6007.h5"
_STRIPPED = Path(tempfile.mkdtemp(prefix="sp-undigested-"))
atexit.register(shutil.rmtree, _STRIPPED, True)


def undigested(rel: str) -> Path:
    """A stored trace as it was before `scaleprobe-analyze upgrade` gave it a digest: the bytes after
    its block (h5jam only prepended the block, so they are the original file)."""
    dst = _STRIPPED / rel.replace("/", "_")
    if not dst.exists():
        data = (REPO / "results" / rel).read_bytes()
        dst.write_bytes(data if data[:8] == digest.HDF5_SIGNATURE else data[digest.BLOCK_BYTES:])
    return dst


def stripped(name: str, dst_dir) -> object:
    """The regression input without its 512-byte digest block: an undigested file libhdf5 crashes on."""
    dst = dst_dir / name
    dst.write_bytes((REGRESSIONS / name).read_bytes()[digest.BLOCK_BYTES:])
    assert dst.read_bytes()[:8] == digest.HDF5_SIGNATURE
    return dst


@pytest.fixture
def parent_never_opens(monkeypatch):
    """Fail if libhdf5 is handed bytes in this (the parent) process; the child is not affected."""
    def refuse(data):
        raise AssertionError("the parent process opened an unverified file with h5py")
    monkeypatch.setattr(h5open, "open_image", refuse)


@pytest.mark.parametrize("name", CRASHERS)
def test_a_crashing_undigested_file_is_one_line_and_the_parent_survives(tmp_path, name, parent_never_opens):
    bad = stripped(name, tmp_path)
    with pytest.raises(TraceError) as info:
        load_trace(bad)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{bad}: ")
    # libhdf5 on freed memory: mostly an abort or SIGSEGV, now and then an error it notices first
    assert info.value.problem.startswith(("unreadable: the HDF5 library crashed on it (signal ",
                                          "not a readable HDF5 file (corrupt or truncated): ")), message


def test_a_report_over_a_folder_with_crashing_files_exits_0_and_lists_them_unreadable(tmp_path):
    camp = tmp_path / "campaign"
    camp.mkdir()
    walls = [lognormal_walls(1, 2, 6, 20e-6, 0.1)]
    write_allreduce_trace(camp / "good.h5", [{"algorithm": "ring", "bytes": 1024}], walls)
    for name in CRASHERS:
        stripped(name, camp)
    check = run_cli("check", *(str(camp / name) for name in CRASHERS), str(camp / "good.h5"))
    assert check.returncode == 1 and check.stdout.startswith(f"ok: {camp / 'good.h5'} ")
    assert [line.split(": ")[2] for line in check.stderr.splitlines()] == [str(camp / name) for name in CRASHERS]
    proc = run_cli("report", str(camp), "-o", str(tmp_path / "report"), "--trace-figures", "none")
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = (tmp_path / "report" / "report.md").read_text()
    for name in CRASHERS:
        line = next((x for x in text.splitlines() if name in x), "")
        assert "unreadable" in line and ("crashed on it (signal" in line or "not a readable HDF5" in line), (name, line)


def test_a_schema_3_trace_without_its_digest_block_is_refused_without_opening_it_here(tmp_path, parent_never_opens):
    import h5py
    # stripped as a byte copy (its addresses still count the block) and rewritten without a user block
    raw = tmp_path / "v3-stripped.h5"
    raw.write_bytes(DIGESTED_V3.read_bytes()[digest.BLOCK_BYTES:])
    rewritten = tmp_path / "v3-no-block.h5"
    with h5py.File(DIGESTED_V3, "r") as src, h5py.File(rewritten, "w", track_order=True) as dst:
        assert src.attrs["schema_version"] == 3
        for key, value in src.attrs.items():
            dst.attrs[key] = value
        for name in src:
            src.copy(src[name], dst, name=name)
    assert rewritten.read_bytes()[:8] == digest.HDF5_SIGNATURE
    for path in (raw, rewritten):
        with pytest.raises(TraceError) as info:
            load_trace(path)
        problem = info.value.problem
        assert "\n" not in problem
        if path == rewritten:
            assert problem == "corrupt: schema version 3 requires a whole-file digest and the file has none"
        else:
            assert problem.startswith(("corrupt: schema version 3", "not a readable HDF5 file", "unreadable:")), problem


def _same_trace(a, b) -> None:
    # repr: exact for floats, and NaN (final_val_loss of a run without validation) equals itself
    assert repr((a.path, a.attrs, a.provenance, a.env, a.slurm, a.meta)) == repr((b.path, b.attrs, b.provenance, b.env,
                                                                                b.slurm, b.meta))
    assert list(a.tables) == list(b.tables)
    for name in a.tables:
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name], check_exact=True)


@pytest.mark.parametrize("rel", UNDIGESTED)
def test_an_undigested_stored_trace_reads_the_same_in_the_child_as_in_process(rel):
    path = undigested(rel)
    data, verified = h5open.read_image(path)
    assert verified is False
    in_child = load_trace(path)
    in_process = read_image(path, data, False)  # a stored, intact file: safe to open here
    _same_trace(in_child, in_process)
    assert sum(len(t) for t in in_child.tables.values()) > 0
    with h5open.open_h5(path) as snap, h5open.open_image(data) as f:
        assert isinstance(snap, h5open.Group)
        assert snap == h5open.snapshot_of(f)
        assert list(snap) == list(f) and len(snap) > 0


def test_the_snapshot_comparison_can_fail():
    a = h5open.Group({"x": 1}, {"t": h5open.Group({}, {"c": np.arange(3)})})
    b = h5open.Group({"x": 1}, {"t": h5open.Group({}, {"c": np.array([0, 1, 3])})})
    assert a == a and a != b and a != h5open.Group({"x": 2}, {"t": a["t"]})
    assert a != h5open.Group({"x": np.int32(1)}, {"t": a["t"]})  # another type
    nan = h5open.Group({"loss": np.float64("nan")}, {})
    assert nan == h5open.Group({"loss": np.float64("nan")}, {}) != h5open.Group({"loss": np.float64(0)}, {})
    assert a["t/c"][()].tolist() == [0, 1, 2] and "t/c" in a and "t/d" not in a


def test_a_child_past_its_time_limit_is_stopped_as_one_line():
    data = undigested(UNDIGESTED[0]).read_bytes()
    with pytest.raises(h5open.IsolatedError, match=r"^unreadable: the HDF5 library did not finish reading it in"):
        h5open.run_isolated("h5open:snapshot_image", data, "x.h5", timeout_s=0.05)


def test_a_child_over_its_memory_limit_is_one_line():
    # 64 MiB of zeros in 70 KB (gzip): the read must allocate far more than its 16 MiB. The limit is
    # counted above the child's start (numpy, h5py imported), so this is the read's memory alone.
    image = io.BytesIO()
    with h5py.File(image, "w") as f:
        f.create_dataset("zeros", data=np.zeros(64 << 17), compression="gzip", chunks=(1 << 17,))
    with pytest.raises(h5open.IsolatedError) as info:
        h5open.run_isolated("h5open:snapshot_image", image.getvalue(), "x.h5", memory_bytes=16 << 20, timeout_s=20)
    assert str(info.value).startswith("unreadable: reading it needs more than 16 MiB of memory"), info.value
    assert "\n" not in str(info.value)
    # the same file under the default limit reads
    assert not h5open.run_isolated("h5open:snapshot_image", image.getvalue(), "x.h5")["zeros"][()].any()


def test_a_child_that_stops_reading_is_stopped_by_its_time_limit(tmp_path, monkeypatch):
    stuck = tmp_path / "stuck-python"  # a child that never reads its input
    stuck.write_text("#!/bin/sh\nexec sleep 60\n")
    stuck.chmod(0o755)
    monkeypatch.setattr(h5open, "PYTHON", str(stuck))
    data = undigested(UNDIGESTED[-1]).read_bytes()  # 0.8 MB: more than a pipe holds
    with pytest.raises(h5open.IsolatedError, match=r"^unreadable: the HDF5 library did not finish reading it in 3 s"):
        h5open.run_isolated("h5open:snapshot_image", data, "x.h5", timeout_s=3)


def test_a_verified_file_is_opened_from_the_verified_bytes(tmp_path, monkeypatch):
    path = tmp_path / "t.h5"
    shutil.copyfile(DIGESTED_V3, path)
    reads = []
    real = h5open.Path.read_bytes

    def counting(self):
        reads.append(self)
        return real(self)
    monkeypatch.setattr(h5open.Path, "read_bytes", counting)
    with h5open.open_h5(path) as f:
        path.write_bytes(b"gone")  # what is on disk now does not matter: the bytes were read once
        assert f.attrs["schema_version"] == 3 and len(f["summary"]["bytes"][()]) > 0
    assert reads == [path]


def test_upgrade_rewrites_an_undigested_trace_digested_and_identical_and_leaves_the_rest(tmp_path):
    old = tmp_path / "old.h5"
    shutil.copyfile(undigested(UNDIGESTED[0]), old)
    before = load_trace(old)  # in the child
    crasher = stripped(CRASHERS[0], tmp_path)
    crasher_bytes = crasher.read_bytes()
    done = tmp_path / "done.h5"
    shutil.copyfile(DIGESTED_V3, done)
    missing = tmp_path / "missing.h5"
    proc = run_cli("upgrade", str(old), str(crasher), str(done), str(missing))
    assert proc.returncode == 1  # the crasher could not be upgraded, the missing file not read
    out, err = proc.stdout.splitlines(), proc.stderr.splitlines()
    assert len(out) == 2 and out[0].startswith(f"{old}: upgraded (trace, schema 1): ") and "read back identical" in out[0]
    assert out[1].startswith(f"{done}: has a digest already: left as is")
    assert len(err) == 2 and err[0].startswith(f"scaleprobe-analyze: error: {crasher}: ")
    assert err[1] == f"scaleprobe-analyze: error: {missing}: No such file or directory"
    assert crasher.read_bytes() == crasher_bytes and done.read_bytes() == DIGESTED_V3.read_bytes()
    assert digest.verify(old) is True
    data, verified = h5open.read_image(old)
    _same_trace(read_image(old, data, True), before)  # now read in process, from verified bytes
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["old.h5", "done.h5", crasher.name])  # no temp left


def test_many_undigested_files_share_one_child_and_a_crash_ends_only_its_file(tmp_path, monkeypatch):
    from scaleprobe_analysis.trace import load_traces
    started = []
    real = h5open.subprocess.Popen

    def counting(*args, **kwargs):
        started.append(args[0][0])
        return real(*args, **kwargs)
    monkeypatch.setattr(h5open.subprocess, "Popen", counting)
    a, b = (undigested(rel) for rel in UNDIGESTED[:2])
    files = [a, stripped(CRASHERS[0], tmp_path), b, DIGESTED_V3, tmp_path / "absent.h5"]
    got = load_traces(files)
    assert [type(x).__name__ for x in got] == ["Trace", "TraceError", "Trace", "Trace", "TraceError"]
    assert got[1].path == str(files[1]) and got[1].problem.startswith(("unreadable: ", "not a readable HDF5 file"))
    assert got[4].problem == "trace file not found"
    # one child for a, the crasher ended it, a second for b (more only if the crasher did not crash)
    assert started == [h5open.PYTHON] * 2 or (started == [h5open.PYTHON] and got[1].problem.startswith("not a"))
    data, _ = h5open.read_image(b)
    _same_trace(got[2], read_image(b, data, False))


def test_the_parent_unpickles_only_data_from_the_child():
    import io
    import os
    import pickle
    for evil in (os.system, shutil.rmtree, pd.read_pickle):
        with pytest.raises(pickle.UnpicklingError, match="not data"):
            h5open._Unpickler(io.BytesIO(pickle.dumps(("ok", evil)))).load()
    frame = pd.DataFrame({"a": np.arange(3), "s": np.array(["x", "y", "z"], dtype=object)})
    status, back = h5open._Unpickler(io.BytesIO(pickle.dumps(("ok", frame)))).load()
    pd.testing.assert_frame_equal(back, frame)
