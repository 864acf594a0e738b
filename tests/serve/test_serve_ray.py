"""``relayir.serve.ray``: the same repository as a Ray Serve application on a local Ray
instance (a deployment per model, with its own replica count), answering the same
``tritonclient`` calls as ``relayir serve``."""

from __future__ import annotations

import socket
import time

import numpy as np
import pytest
from serve_fixtures import make_repo

import relayir

ray = pytest.importorskip("ray")
pytest.importorskip("ray.serve")
httpclient = pytest.importorskip("tritonclient.http")


def requests_counted(base: str, model: str) -> float | None:
    """``relayir_requests_total`` with code 200 for ``model`` in the merged /metrics."""
    import httpx
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(f"{base}/metrics").text
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "relayir_requests_total" and s.labels == {"code": "200",
                                                                   "model": model}:
                return s.value
    return None


def settled_count(base: str, model: str, want=None, timeout: float = 20.0) -> float | None:
    """The count once replicas have posted (they do a few ms after a request): ``want``
    when it is reached, else the first value that stays the same for half a second."""
    deadline, last = time.monotonic() + timeout, object()
    while time.monotonic() < deadline:
        now = requests_counted(base, model)
        if now is not None and (now == want or (want is None and now == last)):
            return now
        last = now
        time.sleep(0.5 if want is None else 0.05)
    return requests_counted(base, model)


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
        for attempt in range(2):  # on a loaded machine Serve may kill a slow-starting proxy
            try:
                serve_repository(repo, port=port, num_replicas={"mlp": 2, "dyn": 1})
                break
            except ray.exceptions.ActorDiedError:
                if attempt:
                    raise
                serve.shutdown()
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
    assert running == {"relayir": 1, "relayir-mlp": 2, "relayir-dyn": 1, "relayir-metrics": 1}


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
    for model in ("mlp", "dyn"):
        assert settled_count(base, model) >= 1
    r = httpx.get(f"{base}/v2/models/nope")
    assert r.status_code == 404 and "unknown model 'nope'" in r.json()["error"]


def test_metrics_count_the_requests_of_every_replica(ray_server):
    """mlp runs on two replicas: Ray Serve spreads the requests over both, and /metrics
    counts all of them (it once reported one replica's, picked at random)."""
    import httpx

    base = f"http://127.0.0.1:{ray_server}"
    before = settled_count(base, "mlp") or 0
    x = np.ones((1, 784), "float32").tolist()
    for _ in range(12):
        r = httpx.post(f"{base}/v2/models/mlp/infer", json={"inputs": [
            {"name": "data", "shape": [1, 784], "datatype": "FP32", "data": x}]})
        assert r.status_code == 200, r.text
    assert settled_count(base, "mlp", want=before + 12) == before + 12
