"""The report file: one self-contained HTML page (inline scripts and data, a policy that
lets it fetch nothing), the vendored libraries as published, the API and the command."""

import hashlib
import json
import re
from importlib import resources

import pytest

from relayir.cli import main as relayir_main
from relayir.errors import Error
from relayir.testing.models import get_workload
from relayir.viz import explore, read_report, report_data, with_prelude
from relayir.viz.html import CSP, ReportError, render, vendor_manifest
from relayir.viz.report import SECTIONS

VENDOR = resources.files("relayir.viz").joinpath("vendor")


def test_the_page_holds_everything_and_fetches_nothing(viz_report):
    html = viz_report("mlp").html
    assert f'content="{CSP}"' in html and "default-src 'none'" in CSP
    assert not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)=\"(?!data:)", html)
    assert "sourceMappingURL" not in html
    for lib in vendor_manifest()["scripts"]:
        assert f"{lib['package']} {lib['version']}" in html
    data = read_report(html)
    assert data["sections"] == list(SECTIONS) and data["title"] == "mlp"
    assert set(SECTIONS) <= set(data)


def test_data_cannot_close_its_script_element():
    page = render({"text": "</script><script>alert(1)</script>", "sections": []}, "t")
    assert page.count("</script>") == 3  # the data's, and the two scripts'
    assert read_report(page)["text"] == "</script><script>alert(1)</script>"


def test_vendored_files_are_the_published_ones_with_their_licences():
    manifest = vendor_manifest()
    assert [lib["package"] for lib in manifest["scripts"]] == ["@dagrejs/dagre", "d3-array",
                                                                "d3-contour"]
    for lib in manifest["scripts"]:
        code = VENDOR.joinpath(lib["file"]).read_bytes()
        assert hashlib.sha256(code).hexdigest() == lib["sha256"], lib["file"]
        package = json.loads(VENDOR.joinpath(lib["file"]).parent.joinpath("package.json")
                             .read_text())
        assert (package["name"], package["version"]) == (lib["package"], lib["version"])
        assert package["license"] == lib["license"]
        for licence in lib["licenses"]:
            assert "Permission" in VENDOR.joinpath(licence).read_text()


def test_sections_and_errors():
    mod, params, _ = get_workload("mlp", hidden=8)
    data = report_data(mod, params, sections=("pipeline", "vm"), target="numpy")
    assert {"pipeline", "vm"} <= set(data) and "executor" not in data
    assert data["vm"]["trace"]["steps"]  # random inputs made from the types
    with pytest.raises(Error, match="no section nosuch"):
        report_data(mod, params, sections=("nosuch",))
    with pytest.raises(Error, match="takes an IRModule or a Function"):
        explore("not a module")
    with pytest.raises(ReportError, match="not a relayir explorer report"):
        read_report("<html></html>")


def test_inputs_that_cannot_be_made_are_said_so():
    text = """
def @main(%xs: List[Tensor[(2), float32]]) -> int32 {
  @length(%xs)
}"""
    data = report_data(with_prelude(text), sections=("vm",), target="numpy")
    assert "random inputs only for tensors" in data["no_run"]
    assert "trace" not in data["vm"] and data["vm"]["bytecode"]


@pytest.mark.slow
def test_resnet18_report_is_small_and_quick_to_make(viz_report):
    report = viz_report("resnet18")
    size = report.path.stat().st_size
    print(f"resnet18 report: {size / 1e6:.2f} MB, generated in {report.seconds:.1f} s")
    assert size < 5e6
    assert report.seconds < 20


def test_the_command_writes_a_report(tmp_path, capsys):
    out = tmp_path / "list.html"
    assert relayir_main(["explore", "list", "-o", str(out), "--target", "numpy",
                         "--sections", "pipeline,vm"]) == 0
    assert "wrote" in capsys.readouterr().out
    data = read_report(out.read_text())
    assert data["title"] == "list" and data["vm"]["trace"]["steps"]
    text = tmp_path / "prog.relay"
    text.write_text('def @main(%x: Tensor[(3), float32]) { @sum(Cons(1, Nil)) }\n')
    assert relayir_main(["explore", str(text), "-o", str(tmp_path / "p.html"),
                         "--target", "numpy", "--sections", "pipeline"]) == 0
    assert relayir_main(["explore", "nosuch-model"]) == 2
    assert "no such file, built-in model or example" in capsys.readouterr().err


def test_a_pytorch_program_is_shown_beside_its_relay_import(tmp_path):
    torch = pytest.importorskip("torch")
    net = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU()).eval()
    path = tmp_path / "net.pt2"
    torch.export.save(torch.export.export(net, (torch.zeros(2, 8),)), str(path))
    out = tmp_path / "net.html"
    assert relayir_main(["explore", str(path), "-o", str(out), "--target", "numpy",
                         "--sections", "pipeline"]) == 0
    pipeline = read_report(out.read_text())["pipeline"]
    fx = pipeline["torch"]
    labels = [n["l"] for n in fx["graph"]["nodes"]]
    assert "linear" in labels and "relu" in labels and labels[-1] == "output"
    assert "torch.ops.aten.linear" in fx["code"]
    relay_ops = [n["l"] for n in pipeline["steps"][0]["graph"]["nodes"] if n["k"] == "op"]
    assert "nn.dense" in relay_ops or "nn.matmul" in relay_ops
