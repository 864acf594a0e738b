"""The README's walkthrough models served: a small CNN exported to ONNX (graph executor)
and a transformer encoder with a dynamic sequence length (VM), compiled by ``relayir
compile``; Triton's client gets what ``relayir run`` prints to ``--outputs``."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from relayir.serve.server import BackgroundServer

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
httpclient = pytest.importorskip("tritonclient.http")

pytestmark = pytest.mark.slow


def relayir_cli(*args):
    r = subprocess.run([sys.executable, "-m", "relayir", *map(str, args)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("readme")
    nn = torch.nn
    cnn = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10)).eval()
    with warnings.catch_warnings():  # the README's exporter: the TorchScript one
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(cnn, (torch.randn(1, 3, 32, 32),), str(folder / "cnn.onnx"),
                          input_names=["image"], dynamo=False)

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(1000, 64)
            self.attn = nn.MultiheadAttention(64, 4, batch_first=True)
            self.out = nn.Linear(64, 2)

        def forward(self, input_ids):
            x = self.embed(input_ids)
            return self.out(x + self.attn(x, x, x, need_weights=False)[0])

    seq = torch.export.Dim("seq", max=512)
    program = torch.export.export(Encoder().eval(), (torch.randint(0, 1000, (1, 16)),),
                                  dynamic_shapes={"input_ids": {1: seq}})
    torch.export.save(program, str(folder / "encoder.pt2"))
    repo = folder / "repo"
    for name, source in (("cnn", "cnn.onnx"), ("encoder", "encoder.pt2")):
        (repo / name / "1").mkdir(parents=True)
        relayir_cli("compile", folder / source, "-o", repo / name / "1" / "model.relayir")
    return repo


@pytest.mark.parametrize("model, name, x", [
    ("cnn", "image", np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype("float32")),
    ("encoder", "input_ids", np.random.default_rng(1).integers(0, 1000, (1, 48))),
])
def test_tritonclient_gets_what_relayir_run_writes(repo, tmp_path, model, name, x):
    artifact = repo / model / "1" / "model.relayir"
    np.savez(tmp_path / "in.npz", **{name: x})
    relayir_cli("run", artifact, "--inputs", tmp_path / "in.npz", "--outputs",
                tmp_path / "out.npz")
    with np.load(tmp_path / "out.npz", allow_pickle=False) as f:
        expected = [f[k] for k in f.files]
    with BackgroundServer(repo, poll_seconds=0) as s:
        client = httpclient.InferenceServerClient(f"127.0.0.1:{s.port}")
        meta = client.get_model_metadata(model)
        assert meta["inputs"][0]["name"] == name
        if model == "encoder":
            assert meta["inputs"][0]["shape"] == [1, -1]  # the dynamic sequence length
        for binary in (False, True):
            data = httpclient.InferInput(name, list(x.shape),
                                         "INT64" if x.dtype == np.int64 else "FP32")
            data.set_data_from_numpy(x, binary_data=binary)
            result = client.infer(model, [data], outputs=[
                httpclient.InferRequestedOutput(o["name"], binary_data=binary)
                for o in meta["outputs"]])
            got = [result.as_numpy(o["name"]) for o in meta["outputs"]]
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                np.testing.assert_array_equal(g, e)
        client.close()
