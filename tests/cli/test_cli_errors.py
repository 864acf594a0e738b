"""A user's mistake is one line on stderr naming the problem, exit status 2, and no
traceback unless --traceback; every command's --help has an example."""

import numpy as np
import pytest

from relayir.cli import COMMANDS

pytestmark = pytest.mark.filterwarnings("ignore")


def _one_line_error(r, *words):
    assert r.rc == 2, (r.rc, r.out, r.err)
    assert "Traceback" not in r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def test_missing_file(cli, tmp_path):
    _one_line_error(cli("compile", tmp_path / "nope.onnx"), "nope.onnx", "not found")
    _one_line_error(cli("run", tmp_path / "nope.relayir"), "nope.relayir", "not found")


def test_unknown_model_kind(cli, tmp_path):
    (tmp_path / "model.h5").write_bytes(b"x")
    _one_line_error(cli("compile", tmp_path / "model.h5"), "unknown model kind '.h5'",
                    ".onnx")


def test_corrupt_onnx(cli, tmp_path):
    pytest.importorskip("onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07this is not a protobuf" * 10)
    _one_line_error(cli("compile", bad), "bad.onnx")


def test_corrupt_artifact(cli, tmp_path):
    bad = tmp_path / "bad.relayir"
    bad.write_bytes(b"not a zip")
    _one_line_error(cli("run", bad), "bad.relayir", "not a relayir")


def test_pt2_with_an_unsupported_op(cli, tmp_path):
    torch = pytest.importorskip("torch")

    class Special(torch.nn.Module):
        def forward(self, x):
            return torch.special.bessel_j0(x) + torch.special.bessel_j1(x).sum()

    path = tmp_path / "special.pt2"
    torch.export.save(torch.export.export(Special(), (torch.randn(3),)), str(path))
    line = _one_line_error(cli("compile", path), "unsupported PyTorch operator")
    assert "aten.special_bessel_j0.default: 1" in line
    assert "aten.special_bessel_j1.default: 1" in line  # every one, at once


def test_inputs_with_a_wrong_name_list_the_right_ones(cli, mlp_relay, tmp_path):
    np.savez(tmp_path / "in.npz", date=np.zeros((1, 784), "float32"))
    _one_line_error(cli("run", mlp_relay, "--inputs", tmp_path / "in.npz"),
                    "no input named 'date'", "its inputs are data")


def test_inputs_with_a_wrong_shape(cli, mlp_relay, tmp_path):
    np.savez(tmp_path / "in.npz", data=np.zeros((1, 783), "float32"))
    _one_line_error(cli("run", mlp_relay, "--inputs", tmp_path / "in.npz"),
                    "input data", "expected float32 [1,784], found float32 [1,783]")


def test_inputs_with_a_wrong_dtype(cli, mlp_relay, tmp_path):
    np.savez(tmp_path / "in.npz", data=np.zeros((1, 784), "float64"))
    _one_line_error(cli("run", mlp_relay, "--inputs", tmp_path / "in.npz"),
                    "expected float32 [1,784], found float64 [1,784]")


@pytest.mark.parametrize("shapes, words", [
    ("data:[1,784", ["--input-shapes", "cannot read 'data:[1,784'"]),
    ("data:[1,7x4]", ["--input-shapes", "'7x4'"]),
    ("date:[1,784]", ["no input named 'date'", "its inputs are data"]),
])
def test_malformed_or_wrong_input_shapes(cli, mlp_relay, shapes, words):
    _one_line_error(cli("compile", mlp_relay, "--input-shapes", shapes), *words)


def test_dynamic_input_without_a_size(cli, transformer_pt2, tmp_path):
    artifact = tmp_path / "enc.relayir"
    assert cli("compile", transformer_pt2, "-o", artifact).rc == 0
    _one_line_error(cli("run", artifact), "input input_ids", "dynamic dims", "--input-shapes")


def test_bad_option_values_are_one_line_too(cli, mlp_relay):
    _one_line_error(cli("compile", mlp_relay, "--opt-level", "7"), "--opt-level")
    _one_line_error(cli("compile", mlp_relay, "--target", "gpu"), "gpu")
    _one_line_error(cli("compare", mlp_relay, "--with", "tensorflow"), "tensorflow",
                    "torch, onnxruntime")
    _one_line_error(cli("show", mlp_relay, "--after", "FuseOp"), "FuseOp", "FuseOps")


def test_traceback_on_request(cli, tmp_path):
    r = cli("compile", tmp_path / "nope.onnx", "--traceback")
    assert r.rc == 2 and "Traceback" in r.err and r.err.strip().endswith("not found")


def test_version(cli):
    import relayir

    r = cli("--version")
    assert r.rc == 0 and r.out.strip() == f"relayir {relayir.__version__}"


@pytest.mark.parametrize("command", [c.name for c in COMMANDS])
def test_every_command_help_has_an_example(cli, command):
    r = cli(command, "--help")
    assert r.rc == 0, r.err
    examples = r.out.split("examples:\n", 1)[1].splitlines()
    assert examples and examples[0].strip().startswith(f"relayir {command}")
