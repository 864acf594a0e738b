"""One Prometheus exposition from several servers' (the replicas of ``serve/ray.py``):
what a single ``relayir serve`` would report for all the requests they answered.

Series with the same name and labels are combined: counters, histograms and summaries
add up (requests, latency buckets, sums and counts over every replica), a ``_created``
timestamp keeps the earliest, and a gauge keeps its largest value (the version gauge
is 1 where any replica serves that version). Series only one replica has pass as they
are."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample


def _combine(kind: str, sample_name: str, old: float, new: float) -> float:
    if sample_name.endswith("_created"):
        return min(old, new)
    if kind in ("counter", "histogram", "summary", "untyped", "unknown"):
        return old + new
    return max(old, new)  # gauge, info, stateset: a level, not a count


def merge_expositions(texts: list[str]) -> list[Metric]:
    """The metric families of every exposition in ``texts``, series combined."""
    families: dict[str, Metric] = {}
    values: dict[str, dict] = {}  # family -> (sample name, labels) -> value
    for text in texts:
        for family in text_string_to_metric_families(text):
            if family.name not in families:
                families[family.name] = Metric(family.name, family.documentation,
                                               family.type, family.unit)
                values[family.name] = {}
            series = values[family.name]
            for s in family.samples:
                key = (s.name, tuple(sorted(s.labels.items())))
                series[key] = (s.value if key not in series else
                               _combine(family.type, s.name, series[key], s.value))
    for name, family in families.items():
        family.samples = [Sample(sample, dict(labels), value)
                          for (sample, labels), value in values[name].items()]
    return list(families.values())


class _Merged:
    def __init__(self, texts: list[str]):
        self.texts = texts

    def collect(self):
        return merge_expositions(self.texts)


def merged_exposition(texts: list[str]) -> bytes:
    """The text format of :func:`merge_expositions` (for a ``/metrics`` answer)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Merged(texts))
    return generate_latest(registry)
