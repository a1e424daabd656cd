"""Prometheus metrics of a memory server: what operators of memory services watch (operation rate and
latency, evolutions, store errors, LLM calls, tokens and failures, the analysis queue's length and lag), in a
registry of its own."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from ...api import AgenticMemory
from ...core.log import Operation, observe
from ...errors import StoreError

# From a fast search to an add that waits on a slow model.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class MemoryMetrics:
    """Counts every memory operation of this process (`observe`) and reads the LLM client's usage when
    scraped; `close()` stops counting."""

    def __init__(self, memory: AgenticMemory) -> None:
        self.registry = CollectorRegistry()
        self.operations = Counter("amem_operations", "Memory operations, by operation and outcome (ok or the "
                                  "error's type)", ["op", "outcome"], registry=self.registry)
        self.latency = Histogram("amem_operation_duration_seconds", "Time a memory operation took", ["op"],
                                 buckets=LATENCY_BUCKETS, registry=self.registry)
        self.evolutions = Counter("amem_evolved_notes", "Existing notes an added note revised (evolution)",
                                  registry=self.registry)
        self.store_errors = Counter("amem_store_errors", "Operations the store failed (down or erroring)",
                                    ["error"], registry=self.registry)
        self.registry.register(_LLMUsage(memory))
        self.registry.register(_Queue(memory))
        self._stop: Callable[[], None] = observe(self._observed)

    def _observed(self, operation: Operation, seconds: float, error: BaseException | None) -> None:
        outcome = "ok" if error is None else type(error).__name__
        self.operations.labels(operation.op, outcome).inc()
        self.latency.labels(operation.op).observe(seconds)
        if evolved := operation.fields.get("evolved"):
            self.evolutions.inc(evolved)
        if isinstance(error, StoreError):
            self.store_errors.labels(type(error).__name__).inc()

    def close(self) -> None:
        self._stop()


class _LLMUsage(Collector):
    """The LLM client's own counts, per LLM operation (analysis, tier summaries, respond...)."""

    def __init__(self, memory: AgenticMemory) -> None:
        self._memory = memory

    def collect(self) -> Iterator[CounterMetricFamily]:
        usage = self._memory.llm.usage() if self._memory.llm else {}
        calls = CounterMetricFamily("amem_llm_requests", "Requests sent to the LLM, retries included",
                                    labels=["operation"])
        failures = CounterMetricFamily("amem_llm_failures", "LLM operations that failed after their retries "
                                       "(the heuristic answered instead)", labels=["operation"])
        tokens = CounterMetricFamily("amem_llm_tokens", "Tokens the LLM read and wrote",
                                     labels=["operation", "kind"])
        for name, counts in usage.items():
            calls.add_metric([name], counts["calls"])
            failures.add_metric([name], counts["failures"])
            tokens.add_metric([name, "prompt"], counts["prompt_tokens"])
            tokens.add_metric([name, "completion"], counts["completion_tokens"])
        yield from (calls, failures, tokens)


class _Queue(Collector):
    """The analysis queue of every tenant, read when scraped: how many notes wait, and for how long the oldest."""

    def __init__(self, memory: AgenticMemory) -> None:
        self._memory = memory

    def collect(self) -> Iterator[GaugeMetricFamily]:
        queue = self._memory.queue()
        yield GaugeMetricFamily("amem_analysis_queue", "Notes that wait for the model's analysis",
                                value=queue["pending"])
        yield GaugeMetricFamily("amem_analysis_queue_lag_seconds", "How long the oldest queued note has waited",
                                value=queue["lag_s"])
