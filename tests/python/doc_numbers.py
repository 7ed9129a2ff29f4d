"""Every number in README.md and docs/*.md is an allowed constant or traced to a stored file.

The rule (tests/python/test_doc_numbers.py runs it; ``python3 tests/python/doc_numbers.py``
prints the failures, ``--all`` every number with the phrase or folder that passes it):

- Scanned: the prose of README.md and docs/*.md, split into blocks at blank lines (a paragraph,
  a list, a table, a heading). Not scanned: generated blocks (``<!-- BEGIN generated ... -->`` to
  ``<!-- END generated -->``, checked by their own generator), fenced and indented code blocks
  (a block whose every line is indented by four spaces), code spans,
  HTML comments and link targets (``](...)``).
- A number is a run of digits with optional ``.``/``,`` groups (``229.4``, ``25,557,032``) that
  is not part of a name: not preceded by a letter, digit, ``_ - + / .`` and not followed by a
  letter, digit or ``_`` (so ``x86-64-v4``, ``f32``, ``GPT-2``, ``C++20`` and paths are names).
  A range ``0.98–1.03`` is two numbers. A list or heading marker (``1. `` or ``## 3. `` at the
  start of a line) is markup, not a number.
- A number passes when it is
  (a) allowed: inside an occurrence of a phrase listed in tests/doc-numbers-allowed.txt for that
      file (tab-separated: file or ``*``, the phrase as written, why; whitespace in the phrase
      matches any whitespace, ``{n}`` one number or a list or range of them, as in ``exit {n}``
      or ``at {n} ranks``; case is ignored). A phrase must be more than a number (the context is the point), and
      a phrase that matches nothing is itself a failure, so the list cannot go stale; or
  (b) traced: its block cites a results/ folder that exists (``results/<name>`` anywhere in the
      block, link targets and code spans included; a table also inherits the citations of the
      block just before it), and the number's exact text, as a whole number (not a digit run
      inside a longer number; an element of a comma list counts), occurs in a text file of a
      cited folder: ``*.md *.tsv *.txt *.json *.csv`` at its top (README.md, summary.md,
      summary.tsv, ...) and ``report/*.md`` -- the write-ups and summaries, not the raw logs,
      where a small integer occurs by chance.
- Anything else fails, naming the file, line and number: a ratio or percentage worked out by hand
  occurs in no stored file, so it must be written into the folder's README (by its summarize
  script where one exists) from the raw data, or dropped.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ALLOWED = REPO / "tests" / "doc-numbers-allowed.txt"
TEXT_SUFFIXES = {".md", ".tsv", ".txt", ".json", ".csv"}

GENERATED = re.compile(r"<!-- BEGIN generated.*?<!-- END generated -->", re.S)
COMMENT = re.compile(r"<!--.*?-->", re.S)
FENCE = re.compile(r"^```.*?^```[^\n]*$", re.S | re.M)
INDENTED = re.compile(r"(?:\A|(?<=\n\n))(?:(?: {4}|\t)[^\n]*(?:\n|\Z))+")   # an indented code block
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
LINK_TARGET = re.compile(r"\]\(([^)\s]*)\)")
NUMBER = re.compile(r"(?<![\w+/.\-])\d+(?:[.,]\d+)*(?![\w])")
MARKER = re.compile(r"^[ \t]*(?:#+[ \t]+)?\d+\.(?=[ \t])", re.M)
CITE = re.compile(r"results/([\w.\-]+)")


@dataclass(frozen=True)
class Number:
    file: str      # path relative to the repository
    line: int
    column: int
    text: str      # as written
    status: str    # "allowed", "traced" or "untraced"
    detail: str    # the phrase, the folder, or why it failed

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.text}: {self.detail}"


def blank(text: str, pattern: re.Pattern) -> str:
    """text with every match of pattern replaced by spaces (newlines kept), so offsets stay."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def read_allowed(path: Path = ALLOWED) -> list[tuple[str, str, str]]:
    """(file, phrase, why) rows; '#' lines and blank lines are skipped."""
    rows = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or not all(p.strip() for p in parts):
            raise ValueError(f"{path}:{n}: want 'file<TAB>phrase<TAB>why', got {line!r}")
        phrase = parts[1].strip()
        if not re.search(r"\d|\{n\}", phrase) or not re.sub(r"\d|\{n\}|[.,–/\s]", "", phrase):
            raise ValueError(f"{path}:{n}: phrase {phrase!r} must hold a number and more than the number")
        rows.append((parts[0].strip(), phrase, parts[2].strip()))
    return rows


ONE = r"\d+(?:[.,]\d+)*"
SOME = ONE + r"(?:(?:,\s+|\s+and\s+|\s+or\s+|–|/)" + ONE + ")*"


def phrase_regex(phrase: str) -> re.Pattern:
    """The phrase as a pattern (case-insensitive): whitespace matches any whitespace, '{n}' one
    number or a list or range of them ('1, 2 and 4', '1–3', '1/5/15'); the rest literally."""
    words = [SOME.join(re.escape(part) for part in w.split("{n}")) for w in phrase.split()]
    return re.compile(r"\s+".join(words) + r"(?![\w])", re.I)   # the left edge: see allowed_spans


_READ: dict[Path, str | None] = {}     # folder -> its text, shared by every check of one process
_NUMBERS: dict[Path, set[str]] = {}    # folder -> the numbers written in it


class Folders:
    """Text of the stored campaign folders, read once each."""

    def __init__(self, repo: Path):
        self.repo, self.cache = repo, _READ

    def text(self, name: str) -> str | None:
        folder = (self.repo / "results" / name).resolve()
        if folder not in self.cache:
            if not folder.is_dir():
                self.cache[folder] = None
            else:
                files = sorted(folder.glob("*")) + sorted(folder.glob("report/*.md"))
                parts = [p.read_text(errors="replace") for p in files if p.suffix in TEXT_SUFFIXES and p.is_file()]
                self.cache[folder] = "\n".join(parts)
        return self.cache[folder]

    def holds(self, name: str, number: str) -> bool:
        """Whether number occurs as a whole number in the folder: '1,024' and '229.4' as written,
        and each element of a comma list ('[1,2,3]' holds 2), never a digit run inside a decimal."""
        text = self.text(name)
        if not text:
            return False
        folder = (self.repo / "results" / name).resolve()
        if folder not in _NUMBERS:
            _NUMBERS[folder] = (set(re.findall(r"(?<![\d.])\d+(?:[.,]\d+)*", text))
                                | set(re.findall(r"(?<![\d.])\d+(?:\.\d+)*", text)))
        return number in _NUMBERS[folder]


def blocks(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the blocks of text separated by blank lines."""
    spans, start = [], 0
    for m in re.finditer(r"\n[ \t]*\n", text):
        if text[start:m.start()].strip():
            spans.append((start, m.start()))
        start = m.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


def check_text(rel: str, text: str, allowed: list[tuple[str, str, str]],
               folders: Folders, used: set[int] | None = None) -> list[Number]:
    """Every number of one document, each with its status."""
    hidden = blank(blank(text, GENERATED), COMMENT)       # citations may sit in code and links
    prose = blank(blank(blank(blank(blank(hidden, FENCE), INDENTED), CODE_SPAN), LINK_TARGET), MARKER)
    spans = []                                              # allowed character spans
    for i, (file, phrase, _why) in enumerate(allowed):
        if file not in ("*", rel):
            continue
        for m in phrase_regex(phrase).finditer(prose):
            if m.start() and (prose[m.start() - 1].isalnum() or prose[m.start() - 1] in "_."):
                continue                                    # inside a word: not this phrase
            spans.append((m.start(), m.end(), phrase))
            if used is not None:
                used.add(i)
    out, previous = [], []
    for start, end in blocks(hidden):
        block = hidden[start:end]
        cited = [c for c in (c.rstrip(".") for c in CITE.findall(block)) if folders.text(c) is not None]
        is_table = block.lstrip().startswith("|")
        if is_table:
            cited += previous
        previous = cited if not is_table else previous
        for m in NUMBER.finditer(prose, start, end):
            line = text.count("\n", 0, m.start()) + 1
            where = (rel, line, m.start() - text.rfind("\n", 0, m.start()))
            phrase = next((p for a, b, p in spans if a <= m.start() and m.end() <= b), None)
            if phrase is not None:
                out.append(Number(*where, m.group(0), "allowed", f"allowed by {phrase!r}"))
                continue
            folder = next((c for c in cited if folders.holds(c, m.group(0))), None)
            if folder is not None:
                out.append(Number(*where, m.group(0), "traced", f"results/{folder}"))
            elif cited:
                out.append(Number(*where, m.group(0), "untraced",
                                  f"in no text file of {', '.join('results/' + c for c in sorted(set(cited)))}"))
            else:
                out.append(Number(*where, m.group(0), "untraced",
                                  "not an allowed constant and its paragraph cites no results/ folder"))
    return out


def documents(root: Path) -> list[Path]:
    return [root / "README.md"] + sorted((root / "docs").glob("*.md"))


def check(root: Path = REPO, repo: Path = REPO, allowed_file: Path = ALLOWED) -> tuple[list[Number], list[str]]:
    """Every number of the documents under root (results/ read from repo), and the allow-list
    entries that matched nothing."""
    allowed = read_allowed(allowed_file)
    folders, used, numbers = Folders(repo), set(), []
    for doc in documents(root):
        numbers += check_text(doc.relative_to(root).as_posix(), doc.read_text(), allowed, folders, used)
    stale = [f"{f}\t{p}" for i, (f, p, _w) in enumerate(allowed) if i not in used]
    return numbers, stale


def main(argv: list[str]) -> int:
    """Prints the untraced numbers (with --all, every number and why it passes); 1 if any."""
    numbers, stale = check()
    bad = [n for n in numbers if n.status == "untraced"]
    for n in (numbers if "--all" in argv else bad):
        print(n)
    for s in stale:
        print(f"{ALLOWED.relative_to(REPO)}: matches nothing (remove it): {s}")
    counts = {s: sum(n.status == s for n in numbers) for s in ("allowed", "traced", "untraced")}
    print(f"{len(numbers)} numbers: " + ", ".join(f"{v} {k}" for k, v in counts.items()), file=sys.stderr)
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
