"""No silent skips: the pytest side of tests/optional-parts.txt (a plugin, loaded by conftest.py).

- A test skips for an optional part with ``skip(part, why)`` or ``importorskip(module, part)``:
  the skip message names the part ("optional part torch: ...").
- In CI (SCALEPROBE_CI=1) a skip is turned into a failure unless it names a part that the list
  makes optional here; so is a module skipped at collection.
- With SCALEPROBE_SKIP_RETURN_CODE set (CTest sets 77, its SKIP_RETURN_CODE), a run in which
  nothing failed but something was skipped exits with that code: CTest shows "Not Run", never
  Passed. Without it pytest's own exit codes are unchanged.
"""
from __future__ import annotations

import importlib
import os
import re
from pathlib import Path
from types import ModuleType

import pytest

PARTS_FILE = Path(__file__).resolve().parents[1] / "optional-parts.txt"
_PART_REASON = re.compile(r"optional part (\S+): ")


def parts_file() -> Path:
    return Path(os.environ.get("SCALEPROBE_OPTIONAL_PARTS", PARTS_FILE))


def load_parts(path: Path | None = None) -> dict[str, str]:
    """name -> when ("always" or "VAR=value") from the list; '#' lines and blank lines ignored."""
    parts = {}
    for line in (path or parts_file()).read_text().splitlines():
        fields = line.split(None, 2)
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) < 3:
            raise ValueError(f"{path or parts_file()}: '{line}': expected <name> <when> <why>")
        parts[fields[0]] = fields[1]
    return parts


def in_ci() -> bool:
    return os.environ.get("SCALEPROBE_CI") == "1"


def refusal(reason: str, env=os.environ) -> str | None:
    """Why a skip with this message is a failure in CI; None when the list allows it here."""
    m = _PART_REASON.match(reason)
    if not m:
        return (f"skipped in CI, and not for an optional part of {parts_file()}: {reason}")
    parts = load_parts()
    name = m[1]
    if name not in parts:
        return f"skipped in CI for '{name}', which is not an optional part in {parts_file()}: {reason}"
    when = parts[name]
    if when != "always":
        var, _, value = when.partition("=")
        if env.get(var) != value:
            return f"skipped in CI for '{name}', optional only with {when} (here {var} is not {value}): {reason}"
    return None


def skip(part: str, why: str) -> None:
    """Skips the test (or, at module level, the module) because optional `part` is absent."""
    if part not in load_parts():
        pytest.fail(f"'{part}' is not an optional part in {parts_file()}", pytrace=False)
    pytest.skip(f"optional part {part}: {why}", allow_module_level=True)


def importorskip(module: str, part: str) -> ModuleType:
    """The module, or a skip for optional `part` when it cannot be imported."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        skip(part, f"cannot import {module} ({e})")
        raise  # not reached: skip() raises


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


_skipped = 0


def _police(report) -> None:
    """In CI, a skip the list does not allow becomes a failure; the others are counted."""
    global _skipped
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    why_not = refusal(_skip_reason(report)) if in_ci() else None
    if why_not is None:
        _skipped += 1
        return
    report.outcome = "failed"
    report.longrepr = why_not


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _police(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _police(outcome.get_result())


def pytest_sessionfinish(session, exitstatus):
    code = os.environ.get("SCALEPROBE_SKIP_RETURN_CODE")
    # 5: nothing collected, e.g. the only module skipped at collection.
    if code and _skipped and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = int(code)


def pytest_terminal_summary(terminalreporter):
    if _skipped:
        where = "allowed in CI by" if in_ci() else "in CI, allowed only for the parts of"
        terminalreporter.write_line(f"{_skipped} skip(s): CTest shows Not Run; {where} {parts_file()}")
