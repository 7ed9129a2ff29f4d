#!/usr/bin/python3
"""Damage or craft HDF5 files for the reader tests (tests/unit/safe_reads.sh).

Crafting through h5py (array-attr, retype, drop, huge) models a file written with that content:
its whole-file digest is re-stamped, so the reader's checks beyond the digest see it. Damage to
raw bytes (flip, patch) leaves the digest as it was; `restamp` re-stamps it after.

    craft_h5.py flip FILE [DATASET]        overwrite 4 bytes in the middle of a dataset's data
                                           (its first chunk when chunked; the largest dataset
                                           with data when DATASET is omitted); prints the offset
    craft_h5.py array-attr FILE OBJ NAME KIND N   replace attribute NAME of OBJ by an N-element
                                           array of KIND (str, int or float)
    craft_h5.py retype FILE DATASET float  rewrite a column as float64 (same values)
    craft_h5.py drop FILE DATASET          delete a dataset
    craft_h5.py huge FILE TABLE            add a table of 2**40 rows (chunked, unallocated)
    craft_h5.py patch FILE OLD NEW         overwrite the first occurrence of the bytes OLD
                                           (anywhere in the file, e.g. an attribute) with NEW
    craft_h5.py restamp FILE               re-stamp the whole-file digest over the file as it is
"""
import sys
from contextlib import contextmanager

import h5py
import numpy as np

from scaleprobe_analysis import digest  # python/ on PYTHONPATH (safe_reads.sh)


@contextmanager
def edit(path):
    with h5py.File(path, "r+") as f:
        yield f
    digest.restamp(path)


def data_offset(ds):
    """(offset in the file, size) of a dataset's data, or of its first chunk when chunked."""
    if ds.chunks:  # a chunk's address starts after the user block (the digest), get_offset's not
        info = ds.id.get_chunk_info(0)
        return ds.file.userblock_size + info.byte_offset, info.size
    return ds.id.get_offset(), ds.id.get_storage_size()


def largest_dataset(f):
    found = []
    f.visititems(lambda name, obj: found.append(obj) if isinstance(obj, h5py.Dataset) and obj.size > 1 else None)
    return max(found, key=lambda ds: ds.id.get_storage_size())


def flip(path, name=None):
    with h5py.File(path, "r") as f:
        ds = f[name] if name else largest_dataset(f)
        offset, size = data_offset(ds)
        label = ds.name
    assert offset is not None and size >= 8, (label, offset, size)
    where = offset + size // 2
    with open(path, "r+b") as raw:
        raw.seek(where)
        old = raw.read(4)
        raw.seek(where)
        raw.write(bytes(b ^ 0xA5 for b in old))
    print(f"{label} @ {where}")


def array_attr(path, obj, name, kind, n):
    n = int(n)
    values = {"str": np.array([b"x" * 40] * n, dtype="S40"), "int": np.arange(n, dtype=np.int64),
              "float": np.linspace(0, 1, n)}[kind]
    with edit(path) as f:
        target = f[obj]
        if name in target.attrs:
            del target.attrs[name]
        target.attrs[name] = values


def retype(path, name, kind):
    with edit(path) as f:
        values = f[name][()]
        attrs = dict(f[name].attrs)
        del f[name]
        f.create_dataset(name, data=values.astype(np.float64 if kind == "float" else kind), fletcher32=True)
        f[name].attrs.update(attrs)


def drop(path, name):
    with edit(path) as f:
        del f[name]


def huge(path, table):
    rows = 2**40
    with edit(path) as f:
        g = f.create_group(table)
        g.attrs["rows"] = np.int64(rows)
        g.attrs["scope"] = np.bytes_(b"shared")
        g.create_dataset("value", shape=(rows,), dtype=np.int64, chunks=(1024,), fletcher32=True)


def patch(path, old, new):
    old, new = old.encode(), new.encode()
    assert len(old) == len(new)
    with open(path, "r+b") as raw:
        data = raw.read()
        where = data.index(old)
        raw.seek(where)
        raw.write(new)
    print(where)


if __name__ == "__main__":
    {"patch": patch, "flip": flip, "restamp": digest.restamp, "array-attr": array_attr, "retype": retype, "drop": drop, "huge": huge}[sys.argv[1]](*sys.argv[2:])
