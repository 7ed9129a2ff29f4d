"""No silent skips (tests/optional-parts.txt): a skip shows as CTest "Not Run", never Passed, and in
CI (SCALEPROBE_CI=1) fails unless it is for a listed optional part.

Checked end to end: small pytest files with forced skips run in a subprocess under the plugin
(optional_parts.py), then the same and the shell helper as entries of a throw-away CTest project
registered by the real tests/python/pytest.cmake; the registered entries of this build; and that
every skip in the tree goes through the helpers.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import optional_parts
from helpers import REPO, build_dir

PYTHON_DIR = REPO / "tests" / "python"
# The policy's own variables are set per case; CI itself runs this file with SCALEPROBE_CI=1.
POLICY_VARS = ("SCALEPROBE_CI", "SCALEPROBE_NO_TORCH", "SCALEPROBE_SKIP_RETURN_CODE", "SCALEPROBE_OPTIONAL_PARTS")

FILES = {
    "test_pass.py": "def test_a():\n    pass\n",
    # A skip that names no optional part (as conftest's "mpirun not found on PATH").
    "test_plain_skip.py": "import pytest\n\ndef test_a():\n    pass\n\ndef test_b():\n    pytest.skip('mpirun not found')\n",
    "test_gpu_skip.py": "import optional_parts\n\ndef test_a():\n    optional_parts.skip('gpu', 'no CUDA device')\n",
    # A module skipped at collection for torch, optional only with SCALEPROBE_NO_TORCH=1.
    "test_torch_module.py": ("import optional_parts\noptional_parts.importorskip('sp_no_such_module', 'torch')\n\n"
                             "def test_a():\n    pass\n"),
    "test_unknown_part.py": "import optional_parts\n\ndef test_a():\n    optional_parts.skip('no-such-part', 'x')\n",
}
CONFTEST = "pytest_plugins = ['optional_parts']\n"


def clean_env(**extra: str) -> dict:
    """The environment of a child pytest or ctest: the policy's variables unset, then extra, and
    this folder on PYTHONPATH (the self-tests' conftest loads the plugin optional_parts.py from it)."""
    env = {k: v for k, v in os.environ.items() if k not in POLICY_VARS}
    env.update(extra, PYTHONPATH=str(PYTHON_DIR))
    return env


@pytest.fixture(scope="module")
def selftests(tmp_path_factory):
    root = tmp_path_factory.mktemp("skip_selftests")
    (root / "conftest.py").write_text(CONFTEST)
    for name, text in FILES.items():
        (root / name).write_text(text)
    return root


def pytest_rc(root, name: str, **env: str) -> int:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(root / name)],
                          cwd=root, env=clean_env(**env), capture_output=True, text=True, timeout=120)
    return proc.returncode


# name -> exit code: outside CI, in CI, in CI with SCALEPROBE_NO_TORCH=1 (CTest's skip code 77).
EXPECTED = {
    "test_pass.py": (0, 0, 0),
    "test_plain_skip.py": (77, 1, 1),
    "test_gpu_skip.py": (77, 77, 77),
    "test_torch_module.py": (77, 2, 77),  # 2: pytest's collection error
    "test_unknown_part.py": (1, 1, 1),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_skip_exits_77_and_fails_in_ci_unless_listed(selftests, name):
    got = (pytest_rc(selftests, name, SCALEPROBE_SKIP_RETURN_CODE="77"),
           pytest_rc(selftests, name, SCALEPROBE_SKIP_RETURN_CODE="77", SCALEPROBE_CI="1"),
           pytest_rc(selftests, name, SCALEPROBE_SKIP_RETURN_CODE="77", SCALEPROBE_CI="1", SCALEPROBE_NO_TORCH="1"))
    assert got == EXPECTED[name]


def test_pytest_exit_codes_unchanged_outside_ctest(selftests):
    assert pytest_rc(selftests, "test_plain_skip.py") == 0


def ctest_statuses(project, **env: str) -> dict[str, str]:
    proc = subprocess.run([shutil.which("ctest") or "ctest", "--test-dir", str(project / "build")],
                          env=clean_env(**env), capture_output=True, text=True, timeout=300)
    found = dict(re.findall(r"Test +#\d+: (\S+) \.+[ *]*(Passed|Skipped|Failed|Not Run)", proc.stdout))
    assert len(found) == 4, proc.stdout
    return found


def test_ctest_shows_skips_as_not_run_and_ci_fails_them(selftests, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    shell = REPO / "tests" / "lib" / "optional_part.sh"
    (project / "CMakeLists.txt").write_text(f"""cmake_minimum_required(VERSION 3.25)
project(skip_selftest NONE)
enable_testing()
include({REPO / "tests" / "python" / "pytest.cmake"})
sp_add_pytest_file(pass {selftests / "test_pass.py"})
sp_add_pytest_file(plain_skip {selftests / "test_plain_skip.py"})
sp_add_pytest_file(gpu_skip {selftests / "test_gpu_skip.py"})
add_test(NAME shell_torch_skip COMMAND bash -c "source {shell}; sp_skip_optional_part torch 'no torch here'")
set_tests_properties(shell_torch_skip PROPERTIES SKIP_RETURN_CODE 77)
""")
    subprocess.run([shutil.which("cmake") or "cmake", "-S", str(project), "-B", str(project / "build")],
                   check=True, capture_output=True, timeout=120)
    assert ctest_statuses(project) == {"pass": "Passed", "plain_skip": "Skipped", "gpu_skip": "Skipped",
                                       "shell_torch_skip": "Skipped"}
    assert ctest_statuses(project, SCALEPROBE_CI="1") == {"pass": "Passed", "plain_skip": "Failed",
                                                          "gpu_skip": "Skipped", "shell_torch_skip": "Failed"}
    assert ctest_statuses(project, SCALEPROBE_CI="1", SCALEPROBE_NO_TORCH="1")["shell_torch_skip"] == "Skipped"


def test_shell_helper_refuses_unknown_parts(tmp_path):
    shell = REPO / "tests" / "lib" / "optional_part.sh"
    proc = subprocess.run(["bash", "-c", f"source {shell}; sp_skip_optional_part no-such-part x"],
                          env=clean_env(), capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1 and "not an optional part" in proc.stderr


def test_this_builds_entries_that_can_skip_show_not_run():
    """Every pytest entry, every script that may call sp_skip_optional_part and every MPI gtest binary
    (sp_add_mpi_test: its exit code is the verdict, not a regex that hides failures) has
    SKIP_RETURN_CODE 77; every discovered GoogleTest entry (one test) has the SKIPPED expression."""
    ctest_file = build_dir() / "CTestTestfile.cmake"
    assert ctest_file.exists(), f"{ctest_file} not found (set SCALEPROBE_BUILD_DIR)"
    proc = subprocess.run([shutil.which("ctest") or "ctest", "--test-dir", str(build_dir()), "--show-only=json-v1"],
                          capture_output=True, text=True, check=True, timeout=120)
    tests = json.loads(proc.stdout)["tests"]
    checked = {"pytest": 0, "shell": 0, "gtest": 0, "mpi_gtest": 0}
    for t in tests:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        cmd = t.get("command", [])
        scripts = [a for a in cmd if a.endswith(".sh") and os.path.exists(a)]
        if "pytest" in cmd:
            kind = "pytest"
        elif any("sp_skip_optional_part" in open(s).read() for s in scripts):
            kind = "shell"
        elif any(a.startswith("--gtest_filter") for a in cmd):
            kind = "gtest"
        elif re.search(r"\.np\d+$", t["name"]) and any(os.path.basename(a).startswith("test_") for a in cmd[1:]):
            kind = "mpi_gtest"
        else:
            continue
        checked[kind] += 1
        if kind == "gtest":
            assert "SKIPPED" in str(props.get("SKIP_REGULAR_EXPRESSION")), t["name"]
        else:
            assert props.get("SKIP_RETURN_CODE") == 77, t["name"]
        if kind == "mpi_gtest":
            assert "SKIP_REGULAR_EXPRESSION" not in props, t["name"]
    assert checked["pytest"] >= 10 and checked["shell"] >= 1 and checked["gtest"] >= 50 and checked["mpi_gtest"] >= 10, \
        checked


SKIP_SITES = {  # a way to skip outside Python -> the only file allowed to use it
    re.compile(r"\bGTEST_SKIP\b"): "tests/lib/optional_part.hpp",
    re.compile(r"\bexit 77\b"): "tests/lib/optional_part.sh",
}
# Python skips, found in the syntax tree (so strings and comments do not count): only the helper
# (tests/python/optional_parts.py) may call pytest's skip functions.
PY_SKIP_CALLS = {"pytest.skip", "pytest.importorskip", "pytest.xfail", "skip", "importorskip", "xfail", "skipTest",
                 "unittest.skip", "unittest.skipIf", "unittest.skipUnless"}
PY_SKIP_MARKS = ("pytest.mark.skip", "pytest.mark.skipif", "pytest.mark.xfail", "mark.skip", "mark.skipif", "mark.xfail")
PY_HELPER = "tests/python/optional_parts.py"


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def python_skips(text: str) -> list[str]:
    """Every skip form in Python source: a call of pytest.skip / importorskip / xfail (or the same
    names imported from pytest, or unittest's), a skip/skipif/xfail mark anywhere (decorator,
    pytestmark, parametrize), and a `return` inside a test function (an early return passes a test
    that tested nothing). As "line: form"."""
    found = []
    pytest_names = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module in ("pytest", "unittest"):
            pytest_names |= {a.asname or a.name for a in node.names}
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            last = name.rsplit(".", 1)[-1]
            if name in PY_SKIP_CALLS - {"skip", "importorskip", "xfail"} or last == "skipTest" or \
                    (name in ("skip", "importorskip", "xfail") and name in pytest_names):
                found.append(f"{node.lineno}: {name}()")
        if isinstance(node, ast.Attribute) and _dotted(node).endswith(PY_SKIP_MARKS):
            found.append(f"{node.lineno}: {_dotted(node)}")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            todo = list(node.body)
            while todo:
                n = todo.pop()
                if isinstance(n, ast.Return):
                    found.append(f"{n.lineno}: return in {node.name}")
                elif not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                    todo.extend(ast.iter_child_nodes(n))
    return sorted(set(found))


@pytest.mark.parametrize("source, form", [
    ("import pytest\ndef test_a():\n    pytest.skip('x')\n", "pytest.skip()"),
    ("import pytest\nnp = pytest.importorskip('numpy')\n", "pytest.importorskip()"),
    ("import pytest\ndef test_a():\n    pytest.xfail('x')\n", "pytest.xfail()"),
    ("from pytest import skip\ndef test_a():\n    skip('x')\n", "skip()"),
    ("import pytest\n@pytest.mark.skip(reason='x')\ndef test_a():\n    pass\n", "pytest.mark.skip"),
    ("import pytest\n@pytest.mark.skipif(True, reason='x')\ndef test_a():\n    pass\n", "pytest.mark.skipif"),
    ("import pytest\npytestmark = pytest.mark.skipif(True, reason='x')\n", "pytest.mark.skipif"),
    ("import pytest\n@pytest.mark.parametrize('a', [pytest.param(1, marks=pytest.mark.xfail)])\ndef test_a(a):\n"
     "    pass\n", "pytest.mark.xfail"),
    ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.skipTest('x')\n",
     "self.skipTest()"),
    ("def test_a(tmp_path):\n    if not tmp_path.exists():\n        return\n    assert 0\n", "return in test_a"),
])
def test_the_scan_finds_every_skip_form(source, form):
    assert [f.split(": ", 1)[1] for f in python_skips(source)] == [form]


def test_the_scan_leaves_plain_code_alone():
    source = ("import pytest\ndef helper():\n    return 1\n\ndef test_a():\n    def inner():\n        return 2\n"
              "    assert helper() + inner() == 3  # pytest.skip in a comment\n    assert 'pytest.skip(' != ''\n")
    assert python_skips(source) == []


def test_every_skip_goes_through_the_helpers():
    files = subprocess.run(["git", "ls-files", "tests", "trainers", "collectives", "core", "kernels", "analysis",
                            "jobs", "scripts", "python"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.split()
    assert len(files) > 50
    bad = []
    scanned_python = 0
    for rel in files:
        if not rel.endswith((".py", ".sh", ".cpp", ".hpp", ".cmake")):
            continue
        text = (REPO / rel).read_text(errors="replace")
        if rel.endswith(".py"):
            scanned_python += 1
            if rel != PY_HELPER:
                bad += [f"{rel}:{f}" for f in python_skips(text)]
            continue
        # Code lines only: comments may mention "exit 77" or GTEST_SKIP.
        code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("#", "//")))
        bad += [f"{rel}: {p.pattern}" for p, allowed in SKIP_SITES.items() if rel != allowed and p.search(code)]
    assert scanned_python > 30 and bad == []


def test_the_list_is_well_formed():
    parts = optional_parts.load_parts()
    assert {"gpu", "sysfs-cache", "torch"} <= set(parts)
    for name, when in parts.items():
        assert when == "always" or re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S+", when), (name, when)
