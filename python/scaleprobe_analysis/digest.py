"""The whole-file digest of scaleprobe's HDF5 files (the C++ side: core/trace/file_digest.hpp).

A trace or checkpoint written since schema version 3 starts with a 512-byte HDF5 user block
holding one text line ``scaleprobe-digest 1 crc32 <payload bytes> <crc32 hex>\\n`` padded with
NUL bytes; the crc32 (zlib) covers every byte after the block. :func:`verify` checks it before
h5py (libhdf5) opens the file, because libhdf5 1.10.8 can crash on damaged metadata. A file that
starts with the HDF5 signature instead has no user block: the older format, not verifiable.
"""
from __future__ import annotations

import os
import re
import zlib
from pathlib import Path

BLOCK_BYTES = 512
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
_MAGIC = b"scaleprobe-digest"
_LINE = re.compile(rb"scaleprobe-digest (\d+) (\S+) (\d+) ([0-9a-f]{8})\n")
_CHUNK = 1 << 20


class DigestError(ValueError):
    """The file is corrupt (or not HDF5); ``str(e)`` is the problem, without the file name."""


def _block(payload: int, crc: int) -> bytes:
    return f"scaleprobe-digest 1 crc32 {payload} {crc:08x}\n".encode().ljust(BLOCK_BYTES, b"\0")


def _crc_after_block(f) -> int:
    f.seek(BLOCK_BYTES)
    crc = 0
    while chunk := f.read(_CHUNK):
        crc = zlib.crc32(chunk, crc)
    return crc


def verify(path: str | Path) -> bool:
    """True if the digest matches, False for an older file without one; raises DigestError.
    (Readers use :func:`.h5open.read_image`, which checks the bytes it then opens.)"""
    return verify_bytes(Path(path).read_bytes())


def verify_bytes(data: bytes) -> bool:
    """:func:`verify` on a whole file held in memory: the bytes a reader then hands to h5py."""
    head = data[:BLOCK_BYTES]
    if head.startswith(HDF5_SIGNATURE):
        return False
    if not head.startswith(_MAGIC):
        raise DigestError("not a readable HDF5 file (corrupt or truncated)")
    if len(head) < BLOCK_BYTES:
        raise DigestError(f"corrupt: truncated inside its {BLOCK_BYTES}-byte digest block")
    line = _LINE.match(head)
    if line and line[1] != b"1":
        raise DigestError(f"digest block version {line[1].decode()} is not one this reader reads (1)")
    if not line or line[2] != b"crc32" or _block(int(line[3]), int(line[4], 16)) != head:
        raise DigestError("corrupt: its digest block is damaged")
    payload, stored = int(line[3]), int(line[4], 16)
    after = len(data) - BLOCK_BYTES
    if after != payload:
        how = "truncated" if after < payload else "longer than written"
        raise DigestError(f"corrupt: {how}: {after} bytes after the digest block, the digest covers {payload}")
    computed = zlib.crc32(memoryview(data)[BLOCK_BYTES:])
    if computed != stored:
        raise DigestError(f"corrupt: whole-file crc32 {computed:08x} does not match its digest {stored:08x}")
    return True


def stamp_bytes(payload: bytes) -> bytes:
    """The digested file for an HDF5 image whose user block is BLOCK_BYTES long (its first
    BLOCK_BYTES bytes are replaced by the digest line)."""
    body = memoryview(payload)[BLOCK_BYTES:]
    return _block(len(body), zlib.crc32(body)) + bytes(body)


def stamp_file(path: str | Path) -> None:
    """Write the digest into a closed file created with a BLOCK_BYTES user block left blank
    (h5py.File(..., "w", userblock_size=BLOCK_BYTES)), as the C++ writers do."""
    with open(path, "r+b") as f:
        head = f.read(BLOCK_BYTES)
        if head != bytes(BLOCK_BYTES) and not head.startswith(_MAGIC):
            raise DigestError(f"its first {BLOCK_BYTES} bytes are not a blank user block")
    if not restamp(path):
        with open(path, "r+b") as f:
            f.write(_MAGIC)  # a placeholder restamp overwrites with the whole line
        restamp(path)


def restamp(path: str | Path) -> bool:
    """Rewrite the digest of a file that has a digest block (after changing it on purpose, e.g.
    in a test that alters a trace through h5py); a file without one is left as is. Returns
    whether it had one."""
    with open(path, "r+b") as f:
        head = f.read(BLOCK_BYTES)
        if not head.startswith(_MAGIC):
            return False
        f.seek(BLOCK_BYTES)
        if f.read(len(HDF5_SIGNATURE)) != HDF5_SIGNATURE:
            raise DigestError("no HDF5 superblock after the digest block")
        payload = os.fstat(f.fileno()).st_size - BLOCK_BYTES
        crc = _crc_after_block(f)
        f.seek(0)
        f.write(_block(payload, crc))
    return True
