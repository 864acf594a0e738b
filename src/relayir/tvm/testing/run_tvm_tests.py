"""Run a TVM checkout's Relay tests against ``relayir.tvm`` and count what passes.

    python -m relayir.tvm.testing.run_tvm_tests --tvm-source /tmp/tvm019 \\
        [--files test_op_level1.py ...] [--core] [--junit-dir DIR] [--jobs N] \\
        [--markdown OUT.md] [--update-docs docs/tvm-compat.md] [--json OUT.json]

Each test file runs in its own ``python -m pytest`` process, from the TVM checkout's
root (so that TVM's own ``conftest.py`` files load, and with them
``pytest_plugins = ["tvm.testing.plugin"]``), with ``TVM_TEST_TARGETS=llvm`` and
``-p relayir.tvm.testing.harness_plugin`` (the ``tvm`` import alias, installed before
anything imports ``tvm``). Nothing is stubbed and no test file is changed: a test that
needs an API relayir lacks fails. The counts come from pytest's JUnit XML
(``junit_report``). TVM's code is never copied: the checkout stays where the user has it
(TVM v0.19.0, the last release with Relay, is the reference).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .harness_plugin import COLLECTED_ENV
from .junit_report import FileResult, markdown, parse_junit, replace_between_markers, total

RELAY_TESTS = Path("tests/python/relay")

# The 13 files issue 25 tracks (the core of Relay: op numerics, parser, type inference,
# the main passes, the VM, ADTs, dynamic shapes).
CORE = ("test_op_level1.py", "test_op_level3.py", "test_op_level4.py", "test_ir_parser.py",
        "test_type_infer.py", "test_pass_fold_constant.py", "test_pass_fuse_ops.py",
        "test_pass_dead_code_elimination.py", "test_pass_eliminate_common_subexpr.py",
        "test_pass_gradient.py", "test_vm.py", "test_adt.py", "test_any.py")

_BYOC = "BYOC / external codegens (relayir has no external-codegen partitioning)"
# Paths under tests/python/relay not run, and why: other frameworks' frontends live in
# tests/python/frontend (never looked at); the rest is hardware or infrastructure
# relayir does not have.
EXCLUDED = {
    "opencl_texture/": "GPU-only backend (OpenCL texture memory)",
    "test_pass_legalize_tensorcore.py": "GPU-only (CUDA tensor cores)",
    "collage/": "BYOC: Collage partitions among external codegens",
    "test_pass_collage_partition.py": "BYOC: Collage partitions among external codegens",
    "test_external_codegen.py": _BYOC,
    "test_pass_partition_graph.py": _BYOC,
    "test_pass_annotate_target.py": _BYOC,
    "test_pass_merge_compiler_regions.py": _BYOC,
    "test_pass_merge_composite.py": _BYOC,
    "test_annotated_regions.py": _BYOC,
    "test_json_runtime.py": _BYOC + " (the JSON runtime of DNNL and others)",
    "test_target_hooks.py": _BYOC + " (RelayToTIR target hooks)",
    "test_auto_scheduler_layout_rewrite_networks.py":
        "TVM's schedule search (auto_scheduler), the same kind as meta-schedule",
    "test_auto_scheduler_task_extraction.py":
        "TVM's schedule search (auto_scheduler), the same kind as meta-schedule",
    "test_auto_scheduler_tuning.py":
        "TVM's schedule search (auto_scheduler), the same kind as meta-schedule",
    "test_autotvm_task_extraction.py":
        "TVM's schedule search (AutoTVM), the same kind as meta-schedule",
}

DOC_BEGIN = "<!-- run_tvm_tests: begin -->"
DOC_END = "<!-- run_tvm_tests: end -->"


def relay_test_dir(tvm_source: Path) -> Path:
    """``tests/python/relay`` of a TVM checkout (or the directory itself)."""
    for candidate in (tvm_source / RELAY_TESTS, tvm_source):
        if candidate.is_dir() and any(candidate.glob("test_*.py")):
            return candidate
    raise SystemExit(f"run_tvm_tests: no Relay tests under {tvm_source} "
                     f"(expected {RELAY_TESTS}/test_*.py of a TVM checkout, e.g. v0.19.0)")


def checkout_root(test_dir: Path) -> Path:
    """The directory pytest runs from: the TVM checkout's root (where its conftest is)."""
    for parent in (test_dir, *test_dir.parents):
        if (parent / "conftest.py").is_file() and (parent / "tests").is_dir():
            return parent
    return test_dir


def is_excluded(rel: str) -> str | None:
    for path, why in EXCLUDED.items():
        if rel == path or (path.endswith("/") and rel.startswith(path)):
            return why
    return None


def select_files(test_dir: Path, names: list[str] | None) -> list[str]:
    """Test files relative to ``test_dir``: the ones named, else every ``test_*.py``
    below it that is not excluded."""
    if names:
        out = []
        for name in names:
            path = Path(name)
            rel = path.relative_to(test_dir) if path.is_absolute() else path
            if not (test_dir / rel).is_file():
                raise SystemExit(f"run_tvm_tests: no test file {test_dir / rel}")
            out.append(rel.as_posix())
        return out
    files = sorted(p.relative_to(test_dir).as_posix() for p in test_dir.rglob("test_*.py"))
    return [f for f in files if is_excluded(f) is None]


def run_file(test_dir: Path, rel: str, junit_dir: Path, timeout: float) -> FileResult:
    """One pytest process for one file; at the time limit pytest gets SIGINT (it still
    writes the JUnit XML of what ran) and the rest counts as not run."""
    root = checkout_root(test_dir)
    stem = rel.replace("/", "__").removesuffix(".py")
    xml = junit_dir / f"{stem}.xml"
    collected_path = junit_dir / f"{stem}.collected.json"
    log = junit_dir / f"{stem}.log"
    for p in (xml, collected_path):
        p.unlink(missing_ok=True)
    env = dict(os.environ, TVM_TEST_TARGETS="llvm", **{COLLECTED_ENV: str(collected_path)})
    env.pop("PYTEST_ADDOPTS", None)
    cmd = [sys.executable, "-m", "pytest", str(test_dir / rel), "-q", "--tb=short",
           "-p", "relayir.tvm.testing.harness_plugin", "-p", "tvm.testing.plugin",
           "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly",
           f"--rootdir={root}", f"--junitxml={xml}", "-o", "junit_family=xunit1"]
    start = time.monotonic()
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    collected = None
    if collected_path.is_file():
        collected = json.loads(collected_path.read_text(encoding="utf-8"))
    result = parse_junit(xml, rel, test_dir / rel, collected)
    result.seconds = time.monotonic() - start
    return result


def report_from_dir(test_dir: Path, files: list[str], junit_dir: Path) -> list[FileResult]:
    """Results of an earlier run, from the XML files it left in ``junit_dir``."""
    out = []
    for rel in files:
        stem = rel.replace("/", "__").removesuffix(".py")
        collected_path = junit_dir / f"{stem}.collected.json"
        collected = (json.loads(collected_path.read_text(encoding="utf-8"))
                     if collected_path.is_file() else None)
        out.append(parse_junit(junit_dir / f"{stem}.xml", rel, test_dir / rel, collected))
    return out


def _summary_line(r: FileResult) -> str:
    note = f"  [collection: {r.collection_error}]" if r.collection_error else ""
    return (f"{r.name}: {r.passed}/{r.collected} passed, {r.failed} failed, "
            f"{r.errors + r.not_run} errors, {r.skipped} skipped ({r.seconds:.0f} s){note}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m relayir.tvm.testing.run_tvm_tests",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--tvm-source", required=True, type=Path,
                    help="a TVM checkout (v0.19.0: the last release with Relay)")
    ap.add_argument("--files", nargs="+", help="test files relative to tests/python/relay "
                    "(default: every test_*.py there, less the exclusions)")
    ap.add_argument("--core", action="store_true", help="the 13 core files of issue 25")
    ap.add_argument("--junit-dir", type=Path, help="where the XML and logs go (default: a "
                    "temporary directory)")
    ap.add_argument("--jobs", type=int, default=1, help="files run at once (default 1)")
    ap.add_argument("--timeout", type=float, default=1200.0, help="seconds per file")
    ap.add_argument("--report-only", action="store_true",
                    help="count the XML an earlier run left in --junit-dir, run nothing")
    ap.add_argument("--markdown", type=Path, help="write the per-file table here")
    ap.add_argument("--update-docs", type=Path, help="replace the table between the "
                    f"{DOC_BEGIN} / {DOC_END} markers of this file (docs/tvm-compat.md)")
    ap.add_argument("--json", type=Path, help="write the counts as JSON here")
    args = ap.parse_args(argv)

    test_dir = relay_test_dir(args.tvm_source.resolve())
    files = list(CORE) if args.core and not args.files else select_files(test_dir, args.files)
    if args.report_only and args.junit_dir is None:
        raise SystemExit("run_tvm_tests: --report-only needs --junit-dir")
    junit_dir = (args.junit_dir or Path(tempfile.mkdtemp(prefix="relayir-tvm-tests-")))
    junit_dir.mkdir(parents=True, exist_ok=True)

    if args.report_only:
        results = report_from_dir(test_dir, files, junit_dir)
    else:
        print(f"running {len(files)} files from {test_dir} (JUnit XML in {junit_dir})",
              flush=True)

        def one(rel: str) -> FileResult:
            r = run_file(test_dir, rel, junit_dir, args.timeout)
            print(_summary_line(r), flush=True)
            return r

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(one, files))

    shown = ["python -m relayir.tvm.testing.run_tvm_tests --tvm-source TVM_v0.19.0"]
    if args.core and not args.files:
        shown.append("--core")
    elif args.files:
        shown += ["--files", *args.files]
    table = markdown(results, CORE, " ".join(shown), {} if args.files or args.core
                     else EXCLUDED)
    all_ = total(results)
    core = total([r for r in results if r.name in CORE])
    print(f"\nall: {all_.passed}/{all_.collected} passed "
          f"({100.0 * all_.passed / max(all_.collected, 1):.1f}%)")
    if core.collected:
        print(f"core: {core.passed}/{core.collected} passed "
              f"({100.0 * core.passed / max(core.collected, 1):.1f}%)")
    print("top reasons:")
    for reason, n in all_.reasons.most_common(10):
        print(f"  {n:5d}  {reason}")
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    if args.update_docs:
        doc = args.update_docs.read_text(encoding="utf-8")
        args.update_docs.write_text(replace_between_markers(doc, table, DOC_BEGIN, DOC_END),
                                    encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps([r.to_json() for r in results], indent=1),
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
