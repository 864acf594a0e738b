"""Dynamic batching: requests wait up to ``max_queue_delay_us`` to share a batch of at
most ``max_batch_size`` rows, and each gets its own rows back."""

from __future__ import annotations

import concurrent.futures

import httpx
import numpy as np
import pytest
from serve_fixtures import infer_json, make_repo

import relayir
from relayir.serve.server import BackgroundServer


def batches(server, model: str) -> tuple[float, float]:
    """(rows, batches) the server ran for ``model`` (its batch histogram)."""
    registry = server.manager.metrics.registry
    rows = registry.get_sample_value("relayir_batch_rows_sum", {"model": model}) or 0.0
    count = registry.get_sample_value("relayir_batch_rows_count", {"model": model}) or 0.0
    return rows, count


@pytest.mark.parametrize("source", ["vm", "sizes"])
def test_requests_within_the_delay_share_one_batch(artifacts, tmp_path, source):
    files = [artifacts["vm"]] if source == "vm" else \
        [artifacts["graph_b1"], artifacts["graph_b2"], artifacts["graph_b4"],
         artifacts["graph_b8"]]
    repo = make_repo(tmp_path, {"m": {1: files}},
                     {"m": {"max_batch_size": 8, "max_queue_delay_us": 500_000}})
    xs = [np.random.default_rng(i).standard_normal((r, 784)).astype("float32")
          for i, r in enumerate((1, 2, 1))]  # 4 rows: one batch (padded to 4 for "sizes")
    with BackgroundServer(repo, poll_seconds=0) as s:

        def one(x):
            return httpx.post(f"{s.url}/v2/models/m/infer", json=infer_json("data", x),
                              timeout=30)

        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            responses = list(pool.map(one, xs))
        assert batches(s, "m") == (4.0, 1.0)
    model = relayir.runtime.load(artifacts["vm"])
    for x, r in zip(xs, responses):
        assert r.status_code == 200, r.text
        out = r.json()["outputs"][0]
        assert out["shape"] == [len(x), 10]
        np.testing.assert_allclose(np.float32(out["data"]).reshape(len(x), 10),
                                   model.run([x])[0], rtol=1e-5, atol=1e-6)


def test_a_full_batch_does_not_wait_for_the_delay(artifacts, tmp_path):
    repo = make_repo(tmp_path, {"m": {1: [artifacts["vm"]]}},
                     {"m": {"max_batch_size": 2, "max_queue_delay_us": 30_000_000}})
    with BackgroundServer(repo, poll_seconds=0) as s:
        r = httpx.post(f"{s.url}/v2/models/m/infer",
                       json=infer_json("data", np.ones((2, 784), "float32")), timeout=10)
        assert r.status_code == 200  # 2 rows fill the batch: no 30 s wait
        assert batches(s, "m") == (2.0, 1.0)
