"""``run_tvm_tests``: a TVM-shaped checkout's Relay tests run under the alias and TVM's
plugin, counted from pytest's JUnit XML (collection errors as failing, skips by reason,
GPU targets skipped), and the markdown table written between the markers of a doc."""

import textwrap

from relayir.tvm.testing import junit_report, run_tvm_tests

ROOT_CONFTEST = 'pytest_plugins = ["tvm.testing.plugin"]\n'

PASSING = """
import numpy as np
import pytest
import tvm
import tvm.testing
from tvm import relay


def test_add():
    x = relay.var("x", shape=(2,), dtype="float32")
    f = relay.Function([x], x + x)
    out = relay.create_executor("debug", mod=tvm.IRModule.from_expr(f)).evaluate()(
        np.ones(2, "float32"))
    tvm.testing.assert_allclose(out.numpy(), 2 * np.ones(2))


@pytest.mark.parametrize("target", ["llvm", "cuda", "opencl -device=mali"])
def test_targets(target):
    assert target == "llvm"


@tvm.testing.requires_cuda
def test_needs_cuda():
    raise AssertionError("never runs")


def test_fails():
    assert relay.const(1).data.item() == 2
"""

BROKEN = "import tvm\nfrom tvm import not_a_module_relayir_has\n\ndef test_a():\n    pass\n\n" \
         "def test_b():\n    pass\n"


def make_checkout(tmp_path):
    root = tmp_path / "tvm"
    tests = root / "tests" / "python" / "relay"
    tests.mkdir(parents=True)
    (root / "conftest.py").write_text(ROOT_CONFTEST)
    (tests / "test_good.py").write_text(textwrap.dedent(PASSING))
    (tests / "test_broken.py").write_text(BROKEN)
    (tests / "test_external_codegen.py").write_text("def test_x():\n    pass\n")
    return root


def test_a_checkout_runs_and_counts(tmp_path, needs_cc):
    root = make_checkout(tmp_path)
    doc = tmp_path / "compat.md"
    begin, end = run_tvm_tests.DOC_BEGIN, run_tvm_tests.DOC_END
    doc.write_text(f"# doc\n\n{begin}\nOLD TABLE\n{end}\ntail\n")
    junit = tmp_path / "junit"
    out_json = tmp_path / "r.json"
    assert run_tvm_tests.main(["--tvm-source", str(root), "--junit-dir", str(junit),
                               "--update-docs", str(doc), "--json", str(out_json)]) == 0
    import json

    results = {r["name"]: r for r in json.loads(out_json.read_text())}
    assert set(results) == {"test_good.py", "test_broken.py"}  # BYOC file excluded
    good = results["test_good.py"]
    # test_add, test_targets[llvm] pass; cuda / opencl / requires_cuda are skipped
    assert (good["passed"], good["failed"], good["errors"], good["skipped"]) == (2, 1, 0, 3)
    broken = results["test_broken.py"]
    assert broken["passed"] == 0 and broken["errors"] == 2  # one per test function
    assert "not_a_module_relayir_has" in broken["collection_error"]
    text = doc.read_text()
    assert "OLD TABLE" not in text and text.endswith("tail\n")
    assert "| `test_good.py` | 6 | 2 | 1 | 0 | 3 | 33% |" in text
    assert "test_external_codegen.py" in text  # the exclusions are listed with a reason
    # the XML left behind is counted again without running anything
    again = run_tvm_tests.report_from_dir(root / "tests/python/relay", ["test_good.py"], junit)
    assert again[0].passed == 2


def test_collection_error_counts_each_test_function(tmp_path):
    src = tmp_path / "test_x.py"
    src.write_text("def test_a(): pass\nclass TestB:\n    def test_c(self): pass\n")
    xml = tmp_path / "x.xml"
    xml.write_text('<testsuites><testsuite time="1.5"><testcase classname="" name="test_x">'
                   '<error message="collection failure">E   AttributeError: no atan'
                   '</error></testcase></testsuite></testsuites>')
    r = junit_report.parse_junit(xml, "test_x.py", src)
    assert (r.errors, r.passed, r.collected) == (2, 0, 2)
    assert r.reasons == {"collection: AttributeError: no atan": 2}


def test_a_time_limit_counts_what_did_not_run(tmp_path):
    xml = tmp_path / "x.xml"
    xml.write_text('<testsuites><testsuite><testcase classname="m" name="a"/>'
                   '<testcase classname="m" name="b"><skipped type="pytest.xfail" '
                   'message="known"/></testcase></testsuite></testsuites>')
    r = junit_report.parse_junit(xml, "m.py", None, collected=["a", "b", "c", "d"])
    assert (r.passed, r.skipped, r.not_run, r.collected) == (1, 1, 2, 4)
    assert r.skip_reasons == {"xfail: known": 1}
