"""Small text helpers: byte sizes the way the binaries print them, markdown tables, file stems.

Written here rather than pulled from ``tabulate`` so the package needs only numpy, pandas,
h5py and matplotlib.
"""
from __future__ import annotations

import math

import pandas as pd


def format_bytes(n: float) -> str:
    """8 → '8', 1024 → '1K', 1048576 → '1M' (binary multiples, as ``--sizes`` reads them)."""
    n = float(n)
    for suffix, scale in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if abs(n) >= scale:
            value = n / scale
            return f"{value:.0f}{suffix}" if value == int(value) else f"{value:.3g}{suffix}"
    return f"{n:.0f}"


def format_value(value, digits: int = 4) -> str:
    """A table cell: floats to ``digits`` significant digits, NaN as '–'."""
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if math.isinf(value):
            return "∞"
        return f"{value:.{digits}g}"
    return str(value)


def markdown_table(frame: pd.DataFrame, digits: int = 4) -> str:
    """A GitHub-flavoured markdown table of ``frame`` (index dropped)."""
    header = "| " + " | ".join(str(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    lines = [header, rule]
    for row in frame.itertuples(index=False):
        cells = (format_value(v, digits).replace("|", "\\|") for v in row)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def file_stem(text: str) -> str:
    """``text`` made safe as a file name: anything but letters, digits, '-', '_' and '.' becomes '_'."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)


def seconds_to_ms(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Seconds columns ``x_s`` (or ``x_s_min``, ...) → milliseconds ``x_ms`` (``x_ms_min``): values × 1e3, renamed."""
    renamed = {c: c[:-2] + "_ms" if c.endswith("_s") else c.replace("_s_", "_ms_", 1) for c in columns}
    return frame.assign(**{c: frame[c] * 1e3 for c in columns}).rename(columns=renamed)
