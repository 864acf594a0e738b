"""The infer fast path (``infer.FastInfer``, raw ASGI) answers exactly as the Starlette
route does: the same status, body bytes, headers and metrics, for JSON and binary
tensors and for every kind of bad request; a model run inline on the event loop
answers as one run on a worker thread."""

from __future__ import annotations

import httpx
import numpy as np
import pytest
from serve_fixtures import binary_body, binary_output, infer_json, make_repo

import relayir
from relayir.serve.server import BackgroundServer

X = np.random.default_rng(7).standard_normal((1, 784)).astype("float32")


@pytest.fixture(scope="module")
def servers(artifacts, tmp_path_factory):
    """The same repository behind the fast path and behind Starlette's router."""
    repo = make_repo(tmp_path_factory.mktemp("repo"), {
        "inline": {1: [artifacts["graph_b1"]]},
        "threads": {1: [artifacts["graph_b1"]]},
        "dyn": {1: [artifacts["vm"]]},
        "dyn_alone": {1: [artifacts["vm"]]},
    }, {"inline": {"inline_below_us": 10**9}, "threads": {"inline_below_us": 0},
        "dyn": {"max_batch_size": 8}, "dyn_alone": {"inline_below_us": 10**9}})
    with BackgroundServer(repo, max_body=1 << 20) as fast, \
            BackgroundServer(repo, max_body=1 << 20, fast_path=False) as slow:
        yield fast, slow


def binary(x, **kw):
    return binary_body(x, **kw)


def requests():
    """(name, model path, body, headers): good and bad, JSON and binary."""
    body, headers = binary(X)
    short = dict(headers)
    long_header = {**headers, "Inference-Header-Content-Length": str(len(body) + 5)}
    cases = [("json", "inline", None, {**infer_json("data", X), "id": "r1"}),
             ("binary", "inline", body, headers),
             ("binary-json-out", "inline", *binary(X, binary_output=False)),
             ("versioned", "inline/versions/1", body, headers),
             ("threads-binary", "threads", body, headers),
             ("threads-json", "threads", None, infer_json("data", X)),
             ("batched", "dyn", *binary(np.ones((3, 784), "float32"))),
             ("requested", "inline", None, {**infer_json("data", X),
                                            "outputs": [{"name": "output0"}]}),
             ("unknown-output", "inline", None, {**infer_json("data", X),
                                                 "outputs": [{"name": "logits"}]}),
             ("unknown-model", "nope", None, infer_json("data", X)),
             ("unknown-version", "inline/versions/9", None, infer_json("data", X)),
             ("bad-version", "inline/versions/x", body, headers),
             ("wrong-name", "inline", *binary(X, name="x")),
             ("wrong-dtype", "threads", *binary(X.astype("float64"), datatype="FP64")),
             ("wrong-shape", "inline", *binary(np.ones((2, 784), "float32"))),
             ("too-many-rows", "dyn", *binary(np.ones((9, 784), "float32"))),
             ("missing-input", "inline", None, {"inputs": []}),
             ("malformed-json", "inline", b"{not json", {}),
             ("no-inputs", "inline", None, {"no_inputs": 1}),
             ("short-binary", "inline", body[:-100], short),
             ("extra-binary", "inline", body + b"\0" * 8, headers),
             ("header-too-long", "inline", body, long_header),
             ("header-not-int", "inline", body,
              {**headers, "Inference-Header-Content-Length": "ten"}),
             ("too-large", "inline", b" " * ((1 << 20) + 1), {})]
    return cases


CASES = requests()


def post(url, model, body, headers):
    with httpx.Client(base_url=url, timeout=30) as c:
        if isinstance(body, bytes):
            return c.post(f"/v2/models/{model}/infer", content=body, headers=headers)
        return c.post(f"/v2/models/{model}/infer", json=headers)


@pytest.mark.parametrize("name, model, body, headers", CASES, ids=[c[0] for c in CASES])
def test_fast_path_answers_as_the_starlette_route(servers, name, model, body, headers):
    fast, slow = servers
    a, b = post(fast.url, model, body, headers), post(slow.url, model, body, headers)
    assert a.status_code == b.status_code
    assert a.content == b.content
    for h in ("content-type", "content-length", "inference-header-content-length"):
        assert a.headers.get(h) == b.headers.get(h), h
    if a.status_code != 200:
        assert "error" in a.json()


def test_the_metrics_agree(servers):
    fast, slow = servers
    for _, model, body, headers in CASES:
        for s in servers:
            post(s.url, model, body, headers)

    def samples(server):
        registry = server.manager.metrics.registry
        out = {}
        for family in registry.collect():
            if family.name in ("relayir_requests", "relayir_request_failures",
                               "relayir_request_latency_seconds", "relayir_batch_rows"):
                for s in family.samples:
                    if s.name.endswith(("_total", "_count")):
                        out[s.name, tuple(sorted(s.labels.items()))] = s.value
        return out

    a, b = samples(fast), samples(slow)
    assert a == b
    assert a["relayir_requests_total", (("code", "400"), ("model", "inline"))] >= 1
    assert a["relayir_request_failures_total", (("code", "404"), ("model", "nope"))] >= 1


def test_inline_and_threaded_models(servers, artifacts):
    fast, _ = servers
    inline = fast.manager.models["inline"].current
    threads = fast.manager.models["threads"].current
    assert inline.inline and inline.workers.threads == []
    assert not threads.inline and all(t.is_alive() for t in threads.workers.threads)
    # a symbolic dim that is no batch dim: a request may run far longer than measured
    assert not fast.manager.models["dyn_alone"].current.inline
    want = relayir.runtime.load(artifacts["graph_b1"]).run([X])[0]
    for model in ("inline", "threads"):
        r = post(fast.url, model, *binary(X))
        assert r.status_code == 200
        np.testing.assert_array_equal(binary_output(r), want)


def test_other_methods_on_the_infer_path_go_to_starlette(servers):
    for s in servers:
        r = httpx.get(f"{s.url}/v2/models/inline/infer", timeout=30)
        assert r.status_code == 405 and "error" in r.json()


def test_a_kernel_failing_inline_is_a_500_and_the_loop_keeps_serving(servers):
    fast, _ = servers
    version = fast.manager.models["inline"].current

    def fail(arrays, rows):
        raise relayir.errors.KernelError("kernel fused_nn_dense failed with status 3")

    version.run = fail
    try:
        r = post(fast.url, "inline", *binary(X))
        assert r.status_code == 500 and "fused_nn_dense failed" in r.json()["error"]
    finally:
        del version.run
    assert post(fast.url, "inline", *binary(X)).status_code == 200
