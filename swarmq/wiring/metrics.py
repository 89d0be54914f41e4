"""The figures as Prometheus metric families: a custom collector over a :class:`FigureReader`.

prometheus-client calls :meth:`FigureCollector.collect` on every scrape, so each scrape reads
the figures as they are then (nothing is counted twice, nothing is kept in process memory that
a restart would lose). A figure that cannot be read (Redis down, a file unreadable) makes the
collector export ``swarmq_scrape_error{section} 1`` for its section and the rest still comes
through, so one broken source never blanks the whole dashboard.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector

from swarmq.wiring.figures import Family, FigureReader


def metric_family(family: Family) -> Metric:
    """One :class:`Family` as the prometheus-client family of its kind."""
    if family.kind == "counter":
        counter = CounterMetricFamily(family.name, family.doc, labels=family.labels)
        for labels, value in family.samples:
            counter.add_metric(labels, value)
        return counter
    if family.kind == "histogram":
        histogram = HistogramMetricFamily(family.name, family.doc, labels=family.labels)
        for labels, cumulative, total in family.histograms:
            bounds = [repr(float(b)) for b in family.buckets] + ["+Inf"]
            histogram.add_metric(
                labels, list(zip(bounds, map(float, cumulative), strict=True)), total
            )
        return histogram
    gauge = GaugeMetricFamily(family.name, family.doc, labels=family.labels)
    for labels, value in family.samples:
        gauge.add_metric(labels, value)
    return gauge


class FigureCollector(Collector):
    """Reads every section of the figures on each scrape, labelled by the roster's swarm."""

    def __init__(self, reader: FigureReader) -> None:
        self.reader = reader
        self.sections = reader.sections()

    def collect(self) -> Iterator[Metric]:
        started = time.perf_counter()
        errors = GaugeMetricFamily(
            "swarmq_scrape_error",
            "1 when a section of the figures could not be read on this scrape.",
            labels=["section"],
        )
        for section, read in self.sections:
            try:
                families = read()
            except Exception:  # one broken source never blanks the others; said per section
                errors.add_metric([section], 1.0)
                continue
            errors.add_metric([section], 0.0)
            yield from (metric_family(f) for f in families)
        yield errors
        took = GaugeMetricFamily(
            "swarmq_scrape_duration_seconds", "Seconds this scrape took to read the figures."
        )
        took.add_metric([], time.perf_counter() - started)
        yield took
        info = GaugeMetricFamily("swarmq_info", "The swarm this exporter reads.", labels=["swarm"])
        info.add_metric([self.reader.roster.swarm], 1.0)
        yield info


def figure_registry(reader: FigureReader) -> CollectorRegistry:
    """A registry holding only the figures (no process or platform collectors)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FigureCollector(reader))
    return registry


def exposition(registry: CollectorRegistry) -> bytes:
    """One scrape in the Prometheus text format."""
    return generate_latest(registry)
