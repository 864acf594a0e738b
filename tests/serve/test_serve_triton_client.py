"""Triton's own Python client (``tritonclient[http]``, unmodified) against ``relayir
serve``: health, metadata, and inference with JSON and binary tensors, the outputs equal
to running the artifact directly."""

from __future__ import annotations

import numpy as np
import pytest
from serve_fixtures import HAS_CC, make_repo

import relayir
from relayir.serve.server import BackgroundServer

httpclient = pytest.importorskip("tritonclient.http")


@pytest.fixture(scope="module")
def server(artifacts, tmp_path_factory):
    models = {"mlp": {1: [artifacts["graph_b1"]]}, "dyn": {1: [artifacts["vm"]]}}
    if HAS_CC:
        models["mlp_aot"] = {1: [artifacts["aot_b1"]]}
    repo = make_repo(tmp_path_factory.mktemp("repo"), models, {"dyn": {"max_batch_size": 8}})
    with BackgroundServer(repo) as s:
        yield s


@pytest.fixture
def triton(server):
    client = httpclient.InferenceServerClient(f"127.0.0.1:{server.port}")
    yield client
    client.close()


def test_server_live_ready_and_metadata(triton):
    assert triton.is_server_live() and triton.is_server_ready()
    assert triton.is_model_ready("mlp")
    assert not triton.is_model_ready("nope")
    meta = triton.get_model_metadata("mlp")
    assert meta["inputs"] == [{"name": "data", "datatype": "FP32", "shape": [1, 784]}]
    assert triton.get_model_metadata("dyn", "1")["inputs"][0]["shape"] == [-1, 784]
    assert {m["name"] for m in triton.get_model_repository_index()} >= {"mlp", "dyn"}


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
@pytest.mark.parametrize("model, artifact, rows", [
    ("mlp", "graph_b1", 1), ("dyn", "vm", 5),
    pytest.param("mlp_aot", "aot_b1", 1,
                 marks=pytest.mark.skipif(not HAS_CC, reason="needs a C compiler"))])
def test_infer_equals_running_the_artifact(triton, artifacts, model, artifact, rows, binary):
    x = np.random.default_rng(rows).standard_normal((rows, 784)).astype("float32")
    data = httpclient.InferInput("data", list(x.shape), "FP32")
    data.set_data_from_numpy(x, binary_data=binary)
    out = httpclient.InferRequestedOutput("output0", binary_data=binary)
    result = triton.infer(model, [data], outputs=[out], request_id="7")
    expected = relayir.runtime.load(artifacts[artifact]).run([x])[0]
    np.testing.assert_array_equal(result.as_numpy("output0"), expected)
    assert result.get_response()["model_name"] == model


def test_infer_without_requested_outputs_comes_back_binary(triton, artifacts):
    x = np.ones((1, 784), "float32")
    data = httpclient.InferInput("data", [1, 784], "FP32")
    data.set_data_from_numpy(x)
    result = triton.infer("mlp", [data])
    expected = relayir.runtime.load(artifacts["graph_b1"]).run([x])[0]
    np.testing.assert_array_equal(result.as_numpy("output0"), expected)


def test_errors_reach_the_client_as_exceptions(triton):
    from tritonclient.utils import InferenceServerException

    data = httpclient.InferInput("data", [1, 784], "FP64")
    data.set_data_from_numpy(np.ones((1, 784), "float64"))
    with pytest.raises(InferenceServerException, match="datatype FP32 expected, found FP64"):
        triton.infer("mlp", [data])
    with pytest.raises(InferenceServerException, match="unknown model"):
        triton.get_model_metadata("nope")
