"""``serve/metrics_merge.py``: the replicas' expositions as one server's."""

from __future__ import annotations

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from relayir.serve.metrics import Metrics
from relayir.serve.metrics_merge import merged_exposition


def _samples(text: str) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_counts_add_up_over_replicas_and_levels_keep_the_largest():
    a, b = Metrics(), Metrics()
    for _ in range(3):
        a.request_done("mlp", 200, 0.001)
    b.request_done("mlp", 200, 0.2)
    b.request_done("mlp", 400, 0.0001)
    b.request_done("dyn", 200, 0.001)  # a series only one replica has
    a.loaded.labels("mlp", "1").set(1)
    b.loaded.labels("mlp", "1").set(0)
    texts = [generate_latest(m.registry).decode() for m in (a, b)]
    merged = _samples(merged_exposition(texts).decode())
    one, two = _samples(texts[0]), _samples(texts[1])

    def key(name, **labels):
        return name, tuple(sorted(labels.items()))

    assert merged[key("relayir_requests_total", model="mlp", code="200")] == 4
    assert merged[key("relayir_requests_total", model="mlp", code="400")] == 1
    assert merged[key("relayir_requests_total", model="dyn", code="200")] == 1
    assert merged[key("relayir_request_failures_total", model="mlp", code="400")] == 1
    assert merged[key("relayir_request_latency_seconds_count", model="mlp")] == 5
    le = key("relayir_request_latency_seconds_bucket", model="mlp", le="0.001")
    assert merged[le] == one[le] + two[le] == 4
    total = key("relayir_request_latency_seconds_sum", model="mlp")
    assert abs(merged[total] - (0.003 + 0.2 + 0.0001)) < 1e-12
    assert merged[key("relayir_model_version_loaded", model="mlp", version="1")] == 1
    created = key("relayir_requests_created", model="mlp", code="200")
    assert merged[created] == min(one[created], two[created])
    assert set(merged) == set(one) | set(two)  # no series is lost or made up


def test_nothing_to_merge_is_an_empty_exposition():
    assert merged_exposition([]) == b""
