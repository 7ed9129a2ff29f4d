"""The whole-file digest (schema version 3): load_trace verifies it before h5py opens the file,
refuses a flipped byte anywhere (metadata included), a truncated or extended file and a damaged
digest block in one line, and still reads older traces, which have none."""
from __future__ import annotations

import random
import shutil

import pytest

from scaleprobe_analysis import digest
from scaleprobe_analysis.trace import TraceError, load_trace
from test_trace_checksum import OLD_TRACE


def _copy(src, dst):
    shutil.copyfile(src, dst)
    return dst


def _refused(path) -> str:
    with pytest.raises(TraceError) as info:
        load_trace(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message[len(f"{path}: "):]


def test_fresh_trace_carries_a_matching_digest(allreduce_trace):
    assert digest.verify(allreduce_trace) is True
    head = allreduce_trace.read_bytes()[: digest.BLOCK_BYTES]
    assert head.startswith(b"scaleprobe-digest 1 crc32 ")
    assert head[digest.BLOCK_BYTES - 1] == 0  # NUL-padded


# The superblock (512), the first object headers and heaps (< 4 KiB), and spots across the file.
@pytest.mark.parametrize("where", ["superblock", "early-metadata", "random-0", "random-1", "random-2", "last"])
def test_one_flipped_byte_anywhere_is_refused_as_corrupt(allreduce_trace, tmp_path, where):
    bad = _copy(allreduce_trace, tmp_path / "flipped.h5")
    data = bytearray(bad.read_bytes())
    offsets = {"superblock": 512 + 9, "early-metadata": 512 + 1500, "last": len(data) - 1}
    rng = random.Random(where)
    at = offsets.get(where) or rng.randrange(digest.BLOCK_BYTES, len(data))
    data[at] ^= 0x01
    bad.write_bytes(bytes(data))
    assert "corrupt: whole-file crc32" in _refused(bad)


def test_damaged_digest_block_is_refused(allreduce_trace, tmp_path):
    for at in (0, 20, 40, 200, digest.BLOCK_BYTES - 1):  # magic, header fields, NUL padding
        bad = _copy(allreduce_trace, tmp_path / f"block-{at}.h5")
        data = bytearray(bad.read_bytes())
        data[at] ^= 0x20
        bad.write_bytes(bytes(data))
        problem = _refused(bad)
        assert "corrupt" in problem, (at, problem)


@pytest.mark.parametrize("keep", [0.5, 0.999, 100])
def test_truncated_trace_is_refused(allreduce_trace, tmp_path, keep):
    bad = tmp_path / "truncated.h5"
    data = allreduce_trace.read_bytes()
    bad.write_bytes(data[: int(len(data) * keep) if keep < 1 else keep])
    problem = _refused(bad)
    assert problem.startswith("corrupt: truncated"), problem


def test_extended_trace_is_refused(allreduce_trace, tmp_path):
    bad = _copy(allreduce_trace, tmp_path / "extended.h5")
    with open(bad, "ab") as f:
        f.write(b"\0" * 16)
    assert "corrupt: longer than written" in _refused(bad)


def test_older_trace_without_digest_still_loads():
    assert OLD_TRACE.read_bytes()[:8] == digest.HDF5_SIGNATURE  # no user block
    assert digest.verify(OLD_TRACE) is False
    assert len(load_trace(OLD_TRACE).tables["samples"]) > 0
