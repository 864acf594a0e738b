"""The README's example and the issue's must-show outputs, exactly as users see them."""

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import relayir as relay

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_readme_python_example_runs():
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    exec(compile(block, "README.md", "exec"), {})


def test_relay_example_prints_types_and_runs():
    x = relay.var("x", shape=(2, 2), dtype="float32")
    w = relay.var("w", shape=(2, 2), dtype="float32")
    call = relay.nn.relu(relay.nn.dense(x, w))
    h = relay.var("h")
    func = relay.Function([x, w], relay.Let(h, call, h * relay.const(2.0)))
    mod = relay.IRModule.from_expr(func)
    assert str(mod) == (
        '#[version = "0.0.5"]\n'
        "def @main(%x: Tensor[(2, 2), float32], %w: Tensor[(2, 2), float32]) {\n"
        "  %0 = nn.dense(%x, %w);\n"
        "  let %h = nn.relu(%0);\n"
        "  multiply(%h, 2f)\n"
        "}"
    )
    mod = relay.transform.InferType()(mod)
    assert str(mod["main"].checked_type) == (
        "fn (Tensor[(2, 2), float32], Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32]")
    a = np.array([[1, -2], [3, 4]], "float32")
    b = np.array([[0.5, 1], [-1, 2]], "float32")
    out = relay.create_executor("debug", mod).evaluate()(a, b)
    np.testing.assert_allclose(out, np.maximum(a @ b.T, 0) * 2, rtol=1e-6)


def test_dense_type_error_message():
    a = relay.var("a", shape=(2, 3))
    b = relay.var("b", shape=(4, 5))
    with pytest.raises(relay.TypeInferenceError) as err:
        relay.transform.InferType()(relay.IRModule.from_expr(relay.nn.dense(a, b)))
    assert str(err.value).startswith(
        "nn.dense: in-features mismatch: data is Tensor[(2, 3), float32] "
        "but weight is Tensor[(4, 5), float32]")


def test_parse_error_names_line_and_column():
    with pytest.raises(relay.ParseError, match=r"^2:3: unknown operator 'nn.dence'; did you mean"):
        relay.parse("def @main(%x: Tensor[(2), float32]) {\n  nn.dence(%x)\n}")


def test_main_job_command():
    out = subprocess.run([sys.executable, "-m", "relayir.cli", "run", "mlp", "--repeat", "3"],
                         capture_output=True, text=True, check=True).stdout
    assert "latency" in out and "max error" in out


def test_import_needs_only_numpy():
    code = ("import sys, relayir; bad = [m for m in ('torch', 'onnx', 'onnxruntime', 'scipy') "
            "if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)
