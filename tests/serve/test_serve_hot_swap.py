"""Hot swap: new versions load and warm while the old one serves, requests in flight
finish on their version, failed loads are reported and change nothing."""

from __future__ import annotations

import logging
import shutil
import threading
import time

import httpx
import numpy as np
import pytest
from serve_fixtures import infer_json, make_repo

from relayir.serve.server import BackgroundServer

X = np.ones((1, 784), "float32")


def drop_version(repo, model: str, version: int, source=None, content: bytes | None = None):
    """Put a version directory in place in one rename, as a deployment should."""
    tmp = repo / model / f".incoming-{version}"
    tmp.mkdir()
    if content is not None:
        (tmp / "model.relayir").write_bytes(content)
    else:
        shutil.copyfile(source, tmp / "model.relayir")
    tmp.rename(repo / model / str(version))


def wait_for(predicate, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def serving(server, model="mlp") -> int | None:
    current = server.manager.models[model].current
    return current.number if current else None


@pytest.fixture
def repo(artifacts, tmp_path):
    return make_repo(tmp_path, {"mlp": {1: [artifacts["graph_b1"]]}})


def test_new_versions_take_over_under_load_with_no_failed_request(repo, artifacts):
    sources = [artifacts["vm"], artifacts["graph_b1"]]
    statuses, versions = [], set()
    stop = threading.Event()
    with BackgroundServer(repo, poll_seconds=0.05) as s:

        def load():  # one client, bounded in count and time
            with httpx.Client(base_url=s.url, timeout=30) as c:
                deadline = time.monotonic() + 60
                for _ in range(20000):
                    if stop.is_set() or time.monotonic() > deadline:
                        return
                    r = c.post("/v2/models/mlp/infer", json=infer_json("data", X))
                    statuses.append(r.status_code)
                    if r.status_code == 200:
                        versions.add(r.json()["model_version"])

        client = threading.Thread(target=load)
        client.start()
        try:
            wait_for(lambda: len(statuses) > 3)
            for v in range(2, 6):
                drop_version(repo, "mlp", v, sources[v % 2])
                wait_for(lambda v=v: serving(s) == v)
                n = len(statuses)
                wait_for(lambda n=n: len(statuses) > n + 3)
        finally:
            stop.set()
            client.join(60)
    assert statuses and set(statuses) == {200}
    assert versions == {"1", "2", "3", "4", "5"}


def test_requests_in_flight_finish_on_their_version(repo, artifacts):
    # the slow run below stands for a slow model, which runs on a worker thread; a model
    # fast enough to run inline would block the loop, and the swap, with this sleep
    (repo / "mlp" / "config.json").write_text('{"inline_below_us": 0}')
    with BackgroundServer(repo, poll_seconds=0.05) as s:
        old = s.manager.models["mlp"].current
        real_run = old.run
        started = threading.Event()

        def slow(arrays, rows):
            started.set()
            time.sleep(0.5)
            return real_run(arrays, rows)

        old.run = slow
        result = {}

        def request():
            result["r"] = httpx.post(f"{s.url}/v2/models/mlp/infer",
                                     json=infer_json("data", X), timeout=30)

        t = threading.Thread(target=request)
        t.start()
        assert started.wait(10)
        drop_version(repo, "mlp", 2, artifacts["vm"])
        wait_for(lambda: serving(s) == 2)
        assert old.state == "READY" and old.in_flight == 1  # still draining
        fresh = httpx.post(f"{s.url}/v2/models/mlp/infer", json=infer_json("data", X))
        assert fresh.json()["model_version"] == "2"
        t.join(30)
        assert result["r"].status_code == 200 and result["r"].json()["model_version"] == "1"
        wait_for(lambda: old.state == "UNLOADED")


@pytest.mark.parametrize("content", [b"not a model at all", b"PK\x03\x04\x14\x00broken"],
                         ids=["garbage", "truncated-zip"])
def test_a_corrupt_version_is_reported_and_the_old_one_keeps_serving(repo, caplog, content):
    with caplog.at_level(logging.ERROR, logger="relayir.serve"), \
            BackgroundServer(repo, poll_seconds=0.05) as s:
        drop_version(repo, "mlp", 2, content=content)
        entry = s.manager.models["mlp"]
        wait_for(lambda: 2 in entry.failed)
        ready = httpx.get(f"{s.url}/v2/models/mlp/ready")
        assert ready.status_code == 200
        doc = ready.json()
        assert doc["version"] == "1" and doc["versions"]["2"]["state"] == "UNAVAILABLE"
        assert "ArtifactError" in doc["versions"]["2"]["reason"] or \
            "ModuleFormatError" in doc["versions"]["2"]["reason"]
        v2 = httpx.get(f"{s.url}/v2/models/mlp/versions/2/ready")
        assert v2.status_code == 503 and v2.json()["ready"] is False
        r = httpx.post(f"{s.url}/v2/models/mlp/infer", json=infer_json("data", X))
        assert r.status_code == 200 and r.json()["model_version"] == "1"
        time.sleep(0.2)  # later scans do not retry the same broken files
        assert s.manager.metrics.load_failures.labels("mlp")._value.get() == 1
    assert any("version 2 failed to load" in r.getMessage() for r in caplog.records)


def test_a_model_with_no_loadable_version_is_503_until_one_arrives(tmp_path, artifacts):
    repo = make_repo(tmp_path, {"mlp": {}})
    (repo / "mlp").mkdir()
    drop_version(repo, "mlp", 1, content=b"broken")
    with BackgroundServer(repo, poll_seconds=0.05) as s:
        r = httpx.post(f"{s.url}/v2/models/mlp/infer", json=infer_json("data", X))
        assert r.status_code == 503 and "no version ready" in r.json()["error"]
        assert httpx.get(f"{s.url}/v2/health/ready").status_code == 503
        drop_version(repo, "mlp", 2, artifacts["graph_b1"])
        wait_for(lambda: serving(s) == 2)
        assert httpx.get(f"{s.url}/v2/health/ready").status_code == 200


def test_a_bad_config_is_reported(tmp_path, artifacts):
    repo = make_repo(tmp_path, {"mlp": {1: [artifacts["graph_b1"]]}},
                     {"mlp": {"max_batch_size": -1}})
    with BackgroundServer(repo, poll_seconds=0) as s:
        r = httpx.post(f"{s.url}/v2/models/mlp/infer", json=infer_json("data", X))
        assert r.status_code == 503 and "max_batch_size must be an integer >= 0" in r.text
