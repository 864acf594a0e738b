"""``relayir.serve.ray``: the same repository as a Ray Serve application on a local Ray
instance (a deployment per model, with its own replica count), answering the same
``tritonclient`` calls as ``relayir serve``."""

from __future__ import annotations

import socket

import numpy as np
import pytest
from serve_fixtures import make_repo

import relayir

ray = pytest.importorskip("ray")
pytest.importorskip("ray.serve")
httpclient = pytest.importorskip("tritonclient.http")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_server(artifacts, tmp_path_factory):
    from ray import serve

    from relayir.serve.ray import serve_repository

    repo = make_repo(tmp_path_factory.mktemp("repo"), {
        "mlp": {1: [artifacts["graph_b1"]]}, "dyn": {1: [artifacts["vm"]]}},
        {"dyn": {"max_batch_size": 8}})
    port = free_port()
    # logical CPUs: a replica takes one (the router, 2 of mlp, 1 of dyn)
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False,
             ignore_reinit_error=True)
    try:
        serve_repository(repo, port=port, num_replicas={"mlp": 2, "dyn": 1})
        yield port
    finally:
        serve.shutdown()
        ray.shutdown()


def test_tritonclient_against_ray_serve(ray_server, artifacts):
    client = httpclient.InferenceServerClient(f"127.0.0.1:{ray_server}")
    assert client.is_server_live() and client.is_server_ready()
    assert client.is_model_ready("mlp")
    assert client.get_model_metadata("dyn")["inputs"][0]["shape"] == [-1, 784]
    for model, artifact, rows in (("mlp", "graph_b1", 1), ("dyn", "vm", 3)):
        x = np.random.default_rng(rows).standard_normal((rows, 784)).astype("float32")
        expected = relayir.runtime.load(artifacts[artifact]).run([x])[0]
        for binary in (False, True):
            data = httpclient.InferInput("data", list(x.shape), "FP32")
            data.set_data_from_numpy(x, binary_data=binary)
            out = httpclient.InferRequestedOutput("output0", binary_data=binary)
            result = client.infer(model, [data], outputs=[out])
            np.testing.assert_array_equal(result.as_numpy("output0"), expected)
    client.close()


def test_each_model_is_a_deployment_with_its_replicas(ray_server):
    from ray import serve

    deployments = serve.status().applications["relayir"].deployments
    running = {name: dict(d.replica_states).get("RUNNING", 0)
               for name, d in deployments.items()}
    assert running == {"relayir": 1, "relayir-mlp": 2, "relayir-dyn": 1}


def test_server_wide_endpoints_answer_for_every_model(ray_server):
    import httpx

    base = f"http://127.0.0.1:{ray_server}"
    x = np.ones((1, 784), "float32").tolist()
    for model in ("mlp", "dyn"):
        r = httpx.post(f"{base}/v2/models/{model}/infer", json={"inputs": [
            {"name": "data", "shape": [1, 784], "datatype": "FP32", "data": x}]})
        assert r.status_code == 200, r.text
    index = httpx.post(f"{base}/v2/repository/index").json()
    assert [(row["name"], row["state"]) for row in index] == [("dyn", "READY"),
                                                              ("mlp", "READY")]
    metrics = httpx.get(f"{base}/metrics").text
    for model in ("mlp", "dyn"):
        assert f'relayir_requests_total{{code="200",model="{model}"}}' in metrics
    r = httpx.get(f"{base}/v2/models/nope")
    assert r.status_code == 404 and "unknown model 'nope'" in r.json()["error"]
