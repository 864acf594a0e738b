"""The README's command-line walkthrough runs as written: it makes an ONNX file and a
.pt2 file, then compiles, runs, compares and shows them."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _walkthrough() -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Command line\n"):]
    section = section[:section.index("\n## ", 1)]
    return re.search(r"```bash\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow
def test_readme_walkthrough(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("onnxruntime")
    bin_dir = pathlib.Path(sys.executable).parent  # the relayir script beside this python
    env_path = f"{bin_dir}:{os.environ.get('PATH', '')}"
    r = subprocess.run(["bash", "-e", "-c", _walkthrough()], cwd=tmp_path, text=True,
                       capture_output=True, timeout=900,
                       env={**os.environ, "PATH": env_path})
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout
    assert "wrote cnn.relayir (graph executor" in out
    assert "wrote encoder.relayir (vm executor" in out
    assert "[1,48,2]" in out  # the encoder ran at the length given
    for engine in ("relayir graph", "relayir vm", "torch", "onnxruntime"):
        assert any(line.startswith(engine) for line in out.splitlines()), engine
    assert "// fused_nn_conv2d_add_nn_relu: 3 ops" in out
