"""OpenTelemetry spans and metrics for the memory's operations, each model call and each queued analysis, when the
`otel` extra (the OpenTelemetry API) is installed; without it every function here does nothing.

The engine only emits: the application chooses where spans and metrics go by configuring the OpenTelemetry SDK
(a tracer and a meter provider with their exporters), as for any instrumented library. Model calls follow the
GenAI semantic conventions (a `chat {model}` client span, `gen_ai.client.operation.duration` and
`gen_ai.client.token.usage`); the engine's own spans and metrics are named `amem.*`. No content is recorded:
ids, counts, durations and outcomes only. See docs/observability.md."""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

try:
    from opentelemetry import metrics, trace
    from opentelemetry.trace import SpanKind, Status, StatusCode
except ImportError:  # the `otel` extra is not installed
    metrics = trace = None  # type: ignore[assignment]

SCOPE = "amem_graph"
PROVIDER = "openai"  # the API every configured endpoint speaks (OpenAI-compatible servers)
# Buckets the GenAI conventions advise for durations (s) and token counts.
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)

Scalar = str | int | float | bool


@dataclass
class _Instruments:
    operation_s: Any
    analyses: Any
    llm_s: Any
    llm_tokens: Any
    queues: weakref.WeakValueDictionary[int, Any] = field(default_factory=weakref.WeakValueDictionary)


_instruments: _Instruments | None = None


def _meter() -> _Instruments | None:
    """The instruments, made on first use (the meter provider the application set by then receives them; a proxy
    forwards to one set later)."""
    global _instruments
    if metrics is None:
        return None
    if _instruments is None:
        meter = metrics.get_meter(SCOPE)
        made = _Instruments(
            operation_s=meter.create_histogram("amem.operation.duration", unit="s",
                                               description="Duration of the memory's public operations",
                                               explicit_bucket_boundaries_advisory=DURATION_BUCKETS),
            analyses=meter.create_counter("amem.analysis.count", unit="{analysis}",
                                          description="Queued analyses the worker finished, by outcome"),
            llm_s=meter.create_histogram("gen_ai.client.operation.duration", unit="s",
                                         description="GenAI operation duration",
                                         explicit_bucket_boundaries_advisory=DURATION_BUCKETS),
            llm_tokens=meter.create_histogram("gen_ai.client.token.usage", unit="{token}",
                                              description="Number of input and output tokens used",
                                              explicit_bucket_boundaries_advisory=TOKEN_BUCKETS),
        )
        meter.create_observable_gauge("amem.analysis.queue", [_queue_length], unit="{note}",
                                      description="Notes that wait for the model's analysis")
        meter.create_observable_gauge("amem.analysis.queue.lag", [_queue_lag], unit="s",
                                      description="How long the oldest queued note has waited")
        _instruments = made
    return _instruments


def watch_queue(store: object, source: Any) -> None:
    """Report `source.queue()`'s `pending` and `lag_s` (of every tenant) through the queue gauges while `source`
    lives (held weakly), once per `store` however many memories share it."""
    if (instruments := _meter()) is not None:
        instruments.queues[id(store)] = source


def _queues() -> Iterator[Mapping[str, float]]:
    for source in list(_instruments.queues.values() if _instruments else ()):
        try:
            yield source.queue()
        except Exception:  # noqa: BLE001 - a store that is down or closed reports nothing this time
            continue


def _queue_length(_options: Any) -> Iterable[Any]:
    return [metrics.Observation(sum(q["pending"] for q in _queues()))]  # type: ignore[union-attr]


def _queue_lag(_options: Any) -> Iterable[Any]:
    return [metrics.Observation(max((q["lag_s"] for q in _queues()), default=0.0))]  # type: ignore[union-attr]


class Span:
    """The span of one piece of work (a no-op one without OpenTelemetry): what it did is added as attributes."""

    def __init__(self, span: Any = None) -> None:
        self._span = span
        self.attributes: dict[str, Scalar] = {}

    def set(self, **attributes: Any) -> None:
        scalars = {key: value for key, value in attributes.items() if isinstance(value, Scalar)}
        self.attributes.update(scalars)
        if self._span is not None:
            self._span.set_attributes(scalars)

    def failed(self, error: BaseException) -> None:
        self.attributes["error.type"] = _error_type(error)
        if self._span is not None:
            self._span.set_attribute("error.type", self.attributes["error.type"])
            self._span.set_status(Status(StatusCode.ERROR, type(error).__name__))


@contextmanager
def span(name: str, *, client: bool = False, **attributes: Any) -> Iterator[Span]:
    """A span around the block (the current one's child); an error leaving it marks it failed, with `error.type`."""
    if trace is None:
        yield Span()
        return
    kind = SpanKind.CLIENT if client else SpanKind.INTERNAL
    with trace.get_tracer(SCOPE).start_as_current_span(name, kind=kind, record_exception=False,
                                                       set_status_on_exception=False) as current:
        held = Span(current)
        held.set(**attributes)
        try:
            yield held
        except BaseException as err:
            held.failed(err)
            raise


def operation_done(op: str, seconds: float, error: BaseException | None) -> None:
    if (instruments := _meter()) is not None:
        attributes = {"amem.operation": op, **({"error.type": _error_type(error)} if error else {})}
        instruments.operation_s.record(seconds, attributes)


def analysis_done(outcome: str) -> None:
    if (instruments := _meter()) is not None:
        instruments.analyses.add(1, {"amem.analysis.outcome": outcome})


@contextmanager
def model_call(task: str, model: str, base_url: str, max_tokens: int) -> Iterator[Span]:
    """A GenAI client span and the GenAI metrics around one model call (its retries included); the caller sets
    `gen_ai.response.model` and the token counts on the span it is given."""
    endpoint = urlsplit(base_url)
    common: dict[str, Scalar] = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": PROVIDER,
                                 "gen_ai.request.model": model}
    if endpoint.hostname:
        common["server.address"] = endpoint.hostname
        common["server.port"] = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    started = time.perf_counter()
    held = Span()
    try:
        with span(f"chat {model}", client=True, **common, **{"gen_ai.request.max_tokens": max_tokens,
                                                            "gen_ai.request.temperature": 0.0,
                                                            "gen_ai.output.type": "json", "amem.llm.task": task}) as held:
            yield held
    finally:
        if (instruments := _meter()) is not None:
            done = {**common, **({"error.type": held.attributes["error.type"]} if "error.type" in held.attributes else {})}
            if "gen_ai.response.model" in held.attributes:
                done["gen_ai.response.model"] = held.attributes["gen_ai.response.model"]
            instruments.llm_s.record(time.perf_counter() - started, done)
            for kind in ("input", "output"):
                tokens = held.attributes.get(f"gen_ai.usage.{kind}_tokens")
                if isinstance(tokens, int) and tokens > 0:
                    instruments.llm_tokens.record(tokens, {**done, "gen_ai.token.type": kind})


def _error_type(error: BaseException) -> str:
    """An LLM error's kind (timeout, rate_limited, ...), else the exception's class name."""
    kind = getattr(error, "kind", None)
    return kind if isinstance(kind, str) and kind else type(error).__name__

