"""Per-file counts and failure reasons from pytest's JUnit XML, and the markdown table.

One ``FileResult`` per test file: every test case is exactly one of passed, failed
(an assertion or exception in the test), error (in a fixture's setup or teardown),
skipped (skip and xfail, by reason) or not run (the file hit its time limit). A file
that fails to collect counts one error per ``test_`` function it defines (its
parametrizations are unknown without collecting it), so a file that cannot be imported
never shrinks the denominator.
"""

from __future__ import annotations

import ast
import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class FileResult:
    name: str                       # path relative to the test root, e.g. "test_vm.py"
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    not_run: int = 0                # collected, no result: the file hit its time limit
    collection_error: str = ""      # the reason the file did not collect, if it did not
    seconds: float = 0.0
    reasons: Counter = field(default_factory=Counter)       # failure/error reason -> count
    skip_reasons: Counter = field(default_factory=Counter)

    @property
    def collected(self) -> int:
        return self.passed + self.failed + self.errors + self.skipped + self.not_run

    @property
    def not_passing(self) -> int:
        return self.failed + self.errors + self.not_run

    def to_json(self) -> dict:
        return {"name": self.name, "passed": self.passed, "failed": self.failed,
                "errors": self.errors, "skipped": self.skipped, "not_run": self.not_run,
                "collection_error": self.collection_error, "seconds": round(self.seconds, 1),
                "reasons": dict(self.reasons), "skip_reasons": dict(self.skip_reasons)}


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_PATH = re.compile(r" ?\((?:/[^()\s]+)+\.py\)")  # "(/abs/path/module.py)" in ImportErrors


def reason_of(element) -> str:
    """One line that names the cause: the exception line pytest reports, addresses
    removed so that equal causes group together."""
    message = element.get("message") or ""
    text = message.strip() or (element.text or "").strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    # pytest's "E   SomeError: ..." lines name the exception better than a bare message
    e_lines = [ln[1:].strip() for ln in (element.text or "").splitlines()
               if ln.startswith("E ") and ln[1:].strip()]
    line = lines[0] if lines else (e_lines[0] if e_lines else element.tag)
    if line in ("collection failure", "failed on setup with", "") and e_lines:
        line = e_lines[-1]
    line = _PATH.sub("", _ADDRESS.sub("0x…", line))
    return line if len(line) <= 200 else line[:197] + "..."


def count_test_functions(path: Path) -> int:
    """The ``test_`` functions (and methods of ``Test`` classes) a file defines."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return 1
    count = 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name.startswith("test"):
            count += 1
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            count += sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and
                         n.name.startswith("test") for n in node.body)
    return max(count, 1)


def parse_junit(xml_path: Path, name: str, source: Path | None = None,
                collected: list[str] | None = None) -> FileResult:
    """The ``FileResult`` of one file's JUnit XML (``collected``: the node ids the harness
    plugin recorded, to count what never reported)."""
    result = FileResult(name)
    try:
        root = ET.parse(xml_path).getroot()
    except (OSError, ET.ParseError) as exc:
        result.collection_error = f"no JUnit XML ({type(exc).__name__})"
    else:
        _count_cases(root, result, source)
    if collected is not None:
        reported = result.passed + result.failed + result.errors + result.skipped
        result.not_run = max(0, len(collected) - reported)
        if result.not_run:
            result.reasons["not run: the file hit its time limit"] += result.not_run
    elif result.collected == 0 and not result.collection_error:
        result.collection_error = "no tests reported (crash or time limit before collection)"
    if result.collection_error and result.collected == 0:
        n = count_test_functions(source) if source is not None else 1
        result.errors += n
        result.reasons[f"collection: {result.collection_error}"] += n
    return result


def _count_cases(root, result: FileResult, source: Path | None) -> None:
    for suite in root.iter("testsuite"):
        result.seconds += float(suite.get("time") or 0.0)
    for case in root.iter("testcase"):
        failure = case.find("failure")
        error = case.find("error")
        skipped = case.find("skipped")
        if error is not None and (error.get("message") or "").startswith("collection failure"):
            result.collection_error = reason_of(error)
        elif failure is not None:
            result.failed += 1
            result.reasons[reason_of(failure)] += 1
        elif error is not None:
            result.errors += 1
            result.reasons[reason_of(error)] += 1
        elif skipped is not None:
            result.skipped += 1
            kind = "xfail" if skipped.get("type") == "pytest.xfail" else "skip"
            result.skip_reasons[f"{kind}: {reason_of(skipped)}"] += 1
        else:
            result.passed += 1


# ---------------------------------------------------------------- markdown


def _pct(num: int, den: int) -> str:
    return f"{100.0 * num / den:.0f}%" if den else "-"


def _row(label: str, r: FileResult) -> str:
    return (f"| {label} | {r.collected} | {r.passed} | {r.failed} | {r.errors + r.not_run} | "
            f"{r.skipped} | {_pct(r.passed, r.collected)} |")


def total(results: list[FileResult], name: str = "total") -> FileResult:
    out = FileResult(name)
    for r in results:
        out.passed += r.passed
        out.failed += r.failed
        out.errors += r.errors
        out.skipped += r.skipped
        out.not_run += r.not_run
        out.seconds += r.seconds
        out.reasons.update(r.reasons)
        out.skip_reasons.update(r.skip_reasons)
    return out


def markdown(results: list[FileResult], core: tuple[str, ...], command: str,
             excluded: dict[str, str], top: int = 25) -> str:
    """The per-file table, the totals (all files and the core files), the top failure
    reasons, the skips by reason and the exclusions."""
    lines = [f"Generated by `{command}`.", "",
             "| file | collected | passed | failed | errors | skipped | passed of collected |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in sorted(results, key=lambda r: r.name):
        label = f"`{r.name}`" + (" (core)" if r.name in core else "")
        lines.append(_row(label, r))
    core_results = [r for r in results if r.name in core]
    if core_results:
        lines.append(_row(f"**core files ({len(core_results)})**", total(core_results)))
    all_ = total(results)
    lines.append(_row(f"**all files ({len(results)})**", all_))
    lines += ["", "Errors include collection errors (one per `test_` function of a file that "
              "did not collect) and tests a time limit stopped. Skips are TVM's own "
              "(`requires_*`, targets that are not enabled, xfail).", "",
              f"Top failure reasons (of {all_.not_passing} tests not passing):", "",
              "| tests | files | reason |", "|---:|---:|---|"]
    files_by_reason: Counter = Counter()
    for r in results:
        for reason in r.reasons:
            files_by_reason[reason] += 1
    for reason, n in all_.reasons.most_common(top):
        lines.append(f"| {n} | {files_by_reason[reason]} | {_md_escape(reason)} |")
    lines += ["", "Skips by reason:", "", "| tests | reason |", "|---:|---|"]
    for reason, n in all_.skip_reasons.most_common(top):
        lines.append(f"| {n} | {_md_escape(reason)} |")
    if excluded:
        lines += ["", "Files and folders not run:", "", "| path | why |", "|---|---|"]
        for path, why in excluded.items():
            lines.append(f"| `{path}` | {why} |")
    return "\n".join(lines) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").replace("`", "'")


def replace_between_markers(doc: str, body: str, begin: str, end: str) -> str:
    """``doc`` with the text between the two marker lines replaced by ``body`` (the
    markers appended at the end when the document has none yet)."""
    if begin in doc and end in doc:
        head, rest = doc.split(begin, 1)
        _, tail = rest.split(end, 1)
        return f"{head}{begin}\n{body}{end}{tail}"
    return f"{doc.rstrip()}\n\n{begin}\n{body}{end}\n"
