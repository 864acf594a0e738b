"""``--quantize int8 --calibration DATA.npz`` on ``relayir compile`` / ``compare``: the
model file quantized by relayir, compiled as int8, close to the float model; bad
options are one-line errors."""

import json

import numpy as np
import pytest


def _calibration(path, n=8):
    images = np.random.default_rng(3).standard_normal((n, 1, 3, 32, 32)).astype("float32")
    np.savez(path, image=images)  # samples stacked along a new first axis
    return path


def test_compile_quantized_and_run_close_to_onnxruntime(cli, resnet_onnx, ort_reference,
                                                        tmp_path):
    artifact = tmp_path / "resnet_int8.relayir"
    r = cli("compile", resnet_onnx, "--quantize", "int8", "--calibration",
            _calibration(tmp_path / "cal.npz"), "--calibration-method", "entropy", "-o",
            artifact)
    assert r.rc == 0, r.err
    assert "kernels: all" in r.out
    image = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype("float32")
    np.savez(tmp_path / "in.npz", image=image)
    r = cli("run", artifact, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz")
    assert r.rc == 0, r.err
    got = np.load(tmp_path / "out.npz")["output_0"]
    want = ort_reference(resnet_onnx, {"image": image})[0]
    assert np.abs(got - want).max() < 0.1 * np.abs(want).max()
    assert not np.array_equal(got, want)  # int8 arithmetic, not the float model


def test_compare_a_quantized_model(cli, resnet_onnx, tmp_path):
    pytest.importorskip("onnxruntime")
    r = cli("compare", resnet_onnx, "--quantize", "int8", "--calibration",
            _calibration(tmp_path / "cal.npz", 4), "--repeat", "2", "--threads", "1",
            "--json", tmp_path / "report.json")
    assert r.rc == 0, r.err
    report = json.loads((tmp_path / "report.json").read_text())
    graph = next(e for e in report["engines"] if e["engine"] == "relayir graph")
    assert graph["status"] == "ok"
    assert 0 < graph["vs"]["onnxruntime"]["max_abs_err"] < 0.5  # int8 against float


@pytest.mark.parametrize("extra,fragment", [
    (("--quantize", "int8"), "--quantize int8 needs --calibration"),
    (("--calibration", "cal.npz"), "--calibration needs --quantize int8"),
    (("--quantize", "int8", "--calibration", "wrong.npz"), "no array for input 'image'"),
])
def test_bad_quantize_options_are_one_line_errors(cli, resnet_onnx, tmp_path, extra, fragment):
    _calibration(tmp_path / "cal.npz")
    np.savez(tmp_path / "wrong.npz", data=np.zeros((1, 3, 32, 32), "float32"))
    r = cli("compile", resnet_onnx, *extra, "-o", tmp_path / "m.relayir", cwd=tmp_path)
    assert r.rc != 0
    assert fragment in r.err, r.err
    assert "Traceback" not in r.err
