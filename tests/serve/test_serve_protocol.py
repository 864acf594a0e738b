"""``relayir serve`` over HTTP: the Open Inference Protocol's endpoints, JSON and binary
tensors, the repository extension, metrics, and every kind of bad request."""

from __future__ import annotations

import json
import logging

import httpx
import numpy as np
import pytest
from serve_fixtures import binary_body, binary_output, infer_json, make_repo

import relayir
from relayir.errors import KernelError
from relayir.serve.server import BackgroundServer


@pytest.fixture(scope="module")
def server(artifacts, tmp_path_factory):
    repo = make_repo(tmp_path_factory.mktemp("repo"), {
        "mlp": {1: [artifacts["graph_b1"]]},
        "dyn": {1: [artifacts["vm"]]},
        "sizes": {1: [artifacts["graph_b1"], artifacts["graph_b2"], artifacts["graph_b4"]]},
    }, {"dyn": {"max_batch_size": 8}, "sizes": {"max_batch_size": 4, "instances": 2}})
    with BackgroundServer(repo, max_body=1 << 20) as s:
        yield s


@pytest.fixture
def client(server):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        yield c


def direct(path, x):
    return relayir.runtime.load(path).run([x])[0]


def test_health_and_server_metadata(client):
    assert client.get("/v2/health/live").json() == {"live": True}
    assert client.get("/v2/health/ready").status_code == 200
    meta = client.get("/v2").json()
    assert meta["name"] == "relayir" and "binary_tensor_data" in meta["extensions"]


def test_model_metadata_shows_dynamic_dims_as_minus_one(client):
    mlp = client.get("/v2/models/mlp").json()
    assert mlp["inputs"] == [{"name": "data", "datatype": "FP32", "shape": [1, 784]}]
    assert mlp["outputs"] == [{"name": "output0", "datatype": "FP32", "shape": [1, 10]}]
    assert mlp["versions"] == ["1"] and mlp["platform"] == "relayir_graph"
    dyn = client.get("/v2/models/dyn/versions/1").json()
    assert dyn["inputs"][0]["shape"] == [-1, 784] and dyn["outputs"][0]["shape"] == [-1, 10]
    assert dyn["platform"] == "relayir_vm"


def test_model_ready(client):
    r = client.get("/v2/models/mlp/ready")
    assert r.status_code == 200 and r.json()["ready"] is True
    assert client.get("/v2/models/mlp/versions/1/ready").status_code == 200
    assert client.get("/v2/models/mlp/versions/7/ready").status_code == 503


def test_infer_json_equals_running_the_artifact(client, artifacts):
    x = np.random.default_rng(1).standard_normal((1, 784)).astype("float32")
    r = client.post("/v2/models/mlp/infer", json={**infer_json("data", x), "id": "r1"})
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["model_name"] == "mlp" and doc["model_version"] == "1" and doc["id"] == "r1"
    (out,) = doc["outputs"]
    assert out["name"] == "output0" and out["shape"] == [1, 10] and out["datatype"] == "FP32"
    np.testing.assert_array_equal(np.float32(out["data"]).reshape(1, 10),
                                  direct(artifacts["graph_b1"], x))


def test_infer_binary_equals_running_the_artifact(client, artifacts):
    x = np.random.default_rng(2).standard_normal((1, 784)).astype("float32")
    body, headers = binary_body(x)
    r = client.post("/v2/models/mlp/infer", content=body, headers=headers)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/octet-stream"
    np.testing.assert_array_equal(binary_output(r), direct(artifacts["graph_b1"], x))


def test_binary_input_with_json_output(client, artifacts):
    x = np.ones((1, 784), "float32")
    body, headers = binary_body(x, binary_output=False)
    doc = client.post("/v2/models/mlp/infer", content=body, headers=headers).json()
    np.testing.assert_array_equal(np.float32(doc["outputs"][0]["data"]).reshape(1, 10),
                                  direct(artifacts["graph_b1"], x))


@pytest.mark.parametrize("model, rows", [("dyn", 3), ("sizes", 3), ("sizes", 4)])
def test_batching_models_take_any_rows_up_to_the_limit(client, artifacts, model, rows):
    x = np.random.default_rng(rows).standard_normal((rows, 784)).astype("float32")
    r = client.post(f"/v2/models/{model}/infer", json=infer_json("data", x))
    assert r.status_code == 200, r.text
    got = np.float32(r.json()["outputs"][0]["data"]).reshape(rows, 10)
    np.testing.assert_allclose(got, direct(artifacts["vm"], x), rtol=1e-5, atol=1e-6)


def test_concurrent_requests_are_batched_and_split_back(server, artifacts):
    import concurrent.futures

    xs = [np.random.default_rng(i).standard_normal((1, 784)).astype("float32")
          for i in range(24)]

    def one(x):
        with httpx.Client(base_url=server.url, timeout=30) as c:
            body, headers = binary_body(x)
            return binary_output(c.post("/v2/models/dyn/infer", content=body, headers=headers))

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        outs = list(pool.map(one, xs))
    model = relayir.runtime.load(artifacts["vm"])
    for x, out in zip(xs, outs):
        np.testing.assert_allclose(out, model.run([x])[0], rtol=1e-5, atol=1e-6)


def test_instances_run_in_parallel_threads(server):
    version = server.manager.models["sizes"].current
    threads = version.workers.threads
    assert len(threads) == 2 and all(t.is_alive() for t in threads)
    a, b = version.workers._instances  # two executor states over the same loaded kernels
    assert a[4] is not b[4] and a[4].artifact is b[4].artifact


def test_requested_outputs(client):
    x = np.ones((1, 784), "float32")
    req = {**infer_json("data", x), "outputs": [{"name": "output0"}]}
    assert client.post("/v2/models/mlp/infer", json=req).status_code == 200
    req["outputs"] = [{"name": "logits"}]
    r = client.post("/v2/models/mlp/infer", json=req)
    assert r.status_code == 400 and "no output named 'logits'" in r.json()["error"]


BAD = [
    # (model path, body or (body, headers), status, words in the error)
    ("nope", infer_json("data", np.ones((1, 784), "float32")), 404, "unknown model 'nope'"),
    ("mlp/versions/9", infer_json("data", np.ones((1, 784), "float32")), 404,
     "no loaded version 9"),
    ("mlp", {"inputs": [{"name": "x", "shape": [1, 784], "datatype": "FP32",
                         "data": [0.0] * 784}]}, 400, "no input named 'x'"),
    ("mlp", {"inputs": []}, 400, "missing input data"),
    ("mlp", infer_json("data", np.ones((1, 784), "float64"), "FP64"), 400,
     "'data': datatype FP32 expected, found FP64"),
    ("mlp", infer_json("data", np.ones((2, 784), "float32")), 400,
     "'data': shape [1, 784] expected, found [2, 784]"),
    ("mlp", {"inputs": [{"name": "data", "shape": [1, 784], "datatype": "FP32",
                         "data": [0.0] * 3}]}, 400, "takes 784 elements, data holds 3"),
    ("mlp", {"inputs": [{"name": "data", "shape": [1, 784], "datatype": "STRING",
                         "data": []}]}, 400, "datatype 'STRING' is not supported"),
    ("mlp", {"inputs": [{"name": "data", "shape": "1x784", "datatype": "FP32",
                         "data": []}]}, 400, "\"shape\" must be a list"),
    ("mlp", {"inputs": [{"name": "data", "shape": [1, 784], "datatype": "FP32"}]}, 400,
     "neither \"data\" nor binary_data_size"),
    ("mlp", {"no_inputs": 1}, 400, "with an \"inputs\" list"),
    ("mlp", (b"{not json", {}), 400, "malformed JSON"),
    ("dyn", infer_json("data", np.ones((9, 784), "float32")), 400, "takes 1 to 8 rows"),
    ("sizes", infer_json("data", np.ones((5, 784), "float32")), 400, "takes 1 to 4 rows"),
]


@pytest.mark.parametrize("model, body, status, message", BAD,
                         ids=[f"{b[2]}-{b[3][:30]}" for b in BAD])
def test_bad_requests_get_a_kserve_error(client, model, body, status, message):
    if isinstance(body, tuple):
        r = client.post(f"/v2/models/{model}/infer", content=body[0], headers=body[1])
    else:
        r = client.post(f"/v2/models/{model}/infer", json=body)
    assert r.status_code == status
    assert message in r.json()["error"]
    assert client.get("/v2/health/live").status_code == 200


def test_binary_body_shorter_than_announced(client):
    body, headers = binary_body(np.ones((1, 784), "float32"))
    r = client.post("/v2/models/mlp/infer", content=body[:-100], headers=headers)
    assert r.status_code == 400
    assert "binary_data_size 3136, but only 3036 bytes" in r.json()["error"]
    headers["Inference-Header-Content-Length"] = str(len(body) + 5)
    r = client.post("/v2/models/mlp/infer", content=body, headers=headers)
    assert r.status_code == 400 and "the body holds" in r.json()["error"]
    headers["Inference-Header-Content-Length"] = "ten"
    r = client.post("/v2/models/mlp/infer", content=body, headers=headers)
    assert r.status_code == 400 and "not an integer" in r.json()["error"]


def test_extra_binary_data_is_refused(client):
    body, headers = binary_body(np.ones((1, 784), "float32"))
    r = client.post("/v2/models/mlp/infer", content=body + b"\0" * 8, headers=headers)
    assert r.status_code == 400 and "the inputs take 3136" in r.json()["error"]


def test_body_over_the_limit_is_413(client):
    r = client.post("/v2/models/mlp/infer", content=b" " * ((1 << 20) + 1))
    assert r.status_code == 413 and "limit" in r.json()["error"]


def test_unknown_route_is_a_json_404(client):
    r = client.get("/v2/nothing/here")
    assert r.status_code == 404 and "error" in r.json()


def test_a_failing_kernel_is_a_500_and_the_server_keeps_serving(server, client):
    version = server.manager.models["mlp"].current

    def fail(arrays, rows):
        raise KernelError("kernel fused_nn_dense failed with status 3")

    version.run = fail
    try:
        r = client.post("/v2/models/mlp/infer", json=infer_json("data", np.ones((1, 784),
                                                                                 "float32")))
        assert r.status_code == 500 and "fused_nn_dense failed" in r.json()["error"]
    finally:
        del version.run
    r = client.post("/v2/models/mlp/infer", json=infer_json("data", np.ones((1, 784),
                                                                             "float32")))
    assert r.status_code == 200


def test_repository_index_unload_and_load(client):
    index = client.post("/v2/repository/index").json()
    assert {"name": "mlp", "version": "1", "state": "READY", "reason": ""} in index
    assert client.post("/v2/repository/models/mlp/unload").status_code == 200
    assert client.get("/v2/models/mlp").status_code == 404
    assert {"name": "mlp", "state": "UNAVAILABLE", "reason": "unloaded"} in \
        client.post("/v2/repository/index").json()
    assert client.post("/v2/repository/models/mlp/load").status_code == 200
    assert client.get("/v2/models/mlp/ready").status_code == 200
    assert client.post("/v2/repository/models/nope/load").status_code == 404
    assert client.post("/v2/repository/models/nope/unload").status_code == 404


def test_metrics(client):
    client.post("/v2/models/mlp/infer", json=infer_json("data", np.ones((1, 784), "float32")))
    client.post("/v2/models/nope/infer", json={})
    text = client.get("/metrics").text
    assert 'relayir_requests_total{code="200",model="mlp"}' in text
    assert 'relayir_request_failures_total{code="404",model="nope"}' in text
    assert "relayir_request_latency_seconds_bucket" in text
    assert 'relayir_model_version_loaded{model="dyn",version="1"} 1.0' in text


def test_access_log_is_one_json_object_per_request(artifacts, tmp_path, caplog):
    repo = make_repo(tmp_path, {"mlp": {1: [artifacts["graph_b1"]]}})
    with caplog.at_level(logging.INFO, logger="relayir.serve.access"), \
            BackgroundServer(repo, access_log=True, poll_seconds=0) as s:
        httpx.post(f"{s.url}/v2/models/mlp/infer",
                   json=infer_json("data", np.ones((1, 784), "float32")))
    records = [json.loads(r.getMessage()) for r in caplog.records
               if r.name == "relayir.serve.access"]
    (rec,) = [r for r in records if r["path"] == "/v2/models/mlp/infer"]
    assert rec["status"] == 200 and rec["model"] == "mlp" and rec["version"] == 1
    assert rec["bytes_in"] > 0 and rec["ms"] > 0
