"""Prometheus metrics of one server (its own registry, so that several servers in one
process, as in the tests, do not collide): requests and failures by status code,
latency, queue time, batch sizes and the loaded versions."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

# seconds: 50 us to 10 s
LATENCY_BUCKETS = (5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1,
                   0.25, 0.5, 1.0, 2.5, 10.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


class Metrics:
    def __init__(self):
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("relayir_requests", "Inference requests by model and status code",
                                ["model", "code"], registry=r)
        self.failures = Counter("relayir_request_failures",
                                "Inference requests answered with an error, by status code",
                                ["model", "code"], registry=r)
        self.latency = Histogram("relayir_request_latency_seconds",
                                 "Inference request time in the server (decode to encode)",
                                 ["model"], buckets=LATENCY_BUCKETS, registry=r)
        self.queue = Histogram("relayir_queue_seconds",
                               "Time a request waited for its batch to start",
                               ["model"], buckets=LATENCY_BUCKETS, registry=r)
        self.batch = Histogram("relayir_batch_rows", "Rows per batch run", ["model"],
                               buckets=BATCH_BUCKETS, registry=r)
        self.loaded = Gauge("relayir_model_version_loaded",
                            "1 for the version a model serves", ["model", "version"],
                            registry=r)
        self.load_failures = Counter("relayir_model_load_failures",
                                     "Versions that failed to load", ["model"], registry=r)

        # label children bound once per (model, code): ``labels()`` costs a few us a call
        self._done: dict[tuple[str, int], tuple] = {}
        self._queue: dict[str, object] = {}

    def request_done(self, model: str, code: int, seconds: float) -> None:
        """Count one inference request answered with ``code`` after ``seconds``."""
        bound = self._done.get((model, code))
        if bound is None:
            failures = self.failures.labels(model, str(code)) if code != 200 else None
            bound = self._done[model, code] = (self.requests.labels(model, str(code)),
                                               failures, self.latency.labels(model))
        requests, failures, latency = bound
        requests.inc()
        if failures is not None:
            failures.inc()
        latency.observe(seconds)

    def queued(self, model: str, seconds: float) -> None:
        """One request's wait for its batch."""
        child = self._queue.get(model)
        if child is None:
            child = self._queue[model] = self.queue.labels(model)
        child.observe(seconds)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


__all__ = ["Metrics"]
