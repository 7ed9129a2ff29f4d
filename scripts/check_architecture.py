#!/usr/bin/python3
"""Checks the C++ tree against docs/architecture.md: every quoted #include stays within what its part may include.

    scripts/check_architecture.py [--root DIR]

The rule is the ``architecture`` fenced block of DIR/docs/architecture.md, one line per part:
``part: other parts it may include`` (``*``: any). A source's part is the longest declared folder
its path starts with. An include is resolved as the compiler does here: next to the including
file if that file exists, else from the repository root (the include path of every target).
Fails (exit 1, one line per problem) on an include that reaches a part not on its part's line, a
source in no declared part, a declared part with no folder, and a cycle among the declared parts.
Sources: the tracked files when DIR is a git work tree, else every file under DIR (build trees
and dot-folders left out); stdlib only.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cu", ".cuh", ".hpp.in")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
RULE_FILE = "docs/architecture.md"


def read_rules(root: Path) -> dict[str, set[str]]:
    if not (root / RULE_FILE).is_file():
        raise SystemExit(f"check_architecture: no {RULE_FILE} under {root}")
    text = (root / RULE_FILE).read_text()
    block = re.search(r"^```architecture\n(.*?)^```", text, re.S | re.M)
    if not block:
        raise SystemExit(f"{RULE_FILE}: no ```architecture block")
    rules: dict[str, set[str]] = {}
    for n, line in enumerate(block.group(1).splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        part, sep, deps = line.partition(":")
        if not sep or not part.strip():
            raise SystemExit(f"{RULE_FILE}: architecture line {n} is not 'part: parts it may include'")
        rules[part.strip()] = set(deps.split())
    return rules


def sources(root: Path) -> list[str]:
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True).stdout
        files = out.split()
    except (OSError, subprocess.CalledProcessError):
        files = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
        files = [f for f in files if not f.startswith(("build/", ".")) and "/." not in f]
    return sorted(f for f in files if f.endswith(SOURCE_SUFFIXES))


def part_of(path: str, parts: list[str]) -> str | None:
    owners = [p for p in parts if path.startswith(p + "/")]
    return max(owners, key=len) if owners else None


def cycle(rules: dict[str, set[str]]) -> list[str]:
    done: set[str] = set()
    stack: list[str] = []

    def visit(part: str) -> list[str]:
        if part in stack:
            return stack[stack.index(part):] + [part]
        if part in done:
            return []
        stack.append(part)
        for dep in sorted(rules.get(part, set()) - {"*"}):
            found = visit(dep)
            if found:
                return found
        stack.pop()
        done.add(part)
        return []

    for part in sorted(rules):
        found = visit(part)
        if found:
            return found
    return []


def problems(root: Path) -> list[str]:
    rules = read_rules(root)
    parts = sorted(rules)
    found = [f"{RULE_FILE}: part '{p}' has no folder" for p in parts if not (root / p).is_dir()]
    found += [f"{RULE_FILE}: part '{p}' may include '{d}', which is no part"
              for p in parts for d in sorted(rules[p] - {"*"}) if d not in rules]
    loop = cycle(rules)
    if loop:
        found.append(f"{RULE_FILE}: the parts include each other in a cycle: {' -> '.join(loop)}")
    for path in sources(root):
        part = part_of(path, parts)
        if part is None:
            found.append(f"{path}: in no part of {RULE_FILE} (add its folder there)")
            continue
        allowed = rules[part]
        if "*" in allowed:
            continue
        here = Path(path).parent
        for n, line in enumerate((root / path).read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            name = m.group(1)
            target = (here / name).as_posix() if (root / here / name).exists() else name
            # A bare name not found next to the file is generated beside it (build_info.hpp); a path
            # in no part is a library's header.
            other = part_of(target, parts) or (part if "/" not in name else None)
            if other is not None and other != part and other not in allowed:
                found.append(f'{path}:{n}: includes "{m.group(1)}" (part {other}), which part {part} may not '
                             f"(it may include: {' '.join(sorted(allowed)) or 'nothing else'}; {RULE_FILE})")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    found = problems(args.root)
    for line in found:
        print(line)
    if found:
        print(f"check_architecture: {len(found)} problem(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
