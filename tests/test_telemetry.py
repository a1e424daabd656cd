"""OpenTelemetry: a span for each operation, each queued analysis and each model call (GenAI conventions), and the
metrics beside them, received by the SDK's in-memory exporters as an application's would receive them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from amem_graph import AgenticMemory, Settings
from amem_graph.bench.scripted_llm import Fault, ScriptedLLM
from amem_graph.settings import LLMSettings

pytestmark = pytest.mark.usefixtures("no_queue_elsewhere")
_spans = InMemorySpanExporter()
_metrics = InMemoryMetricReader()


@pytest.fixture(scope="module", autouse=True)
def providers() -> None:
    """The process's providers, set once (OpenTelemetry refuses a second; one set before is given our exporter
    too); each test starts with no spans."""
    tracing = trace.get_tracer_provider()
    if not isinstance(tracing, TracerProvider):
        tracing = TracerProvider()
        trace.set_tracer_provider(tracing)
        metrics.set_meter_provider(MeterProvider(metric_readers=[_metrics]))
    if not getattr(tracing, "_amem_test_exporter", False):
        tracing.add_span_processor(SimpleSpanProcessor(_spans))
        tracing._amem_test_exporter = True  # type: ignore[attr-defined]


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    _spans.clear()
    yield _spans


def points(name: str) -> list[Any]:
    data = _metrics.get_metrics_data()
    return [point for resource in data.resource_metrics for scope in resource.scope_metrics
            for metric in scope.metrics if metric.name == name for point in metric.data.data_points]


def named(found: tuple[ReadableSpan, ...] | list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [span for span in found if span.name == name]


def test_an_add_its_analysis_and_the_model_call_are_spans_with_the_genai_attributes(
    memory: AgenticMemory, settings: Settings, llm: ScriptedLLM, spans: InMemorySpanExporter,
) -> None:
    llm_settings = LLMSettings(base_url=llm.base_url, model="scripted", backoff_s=0.0, timeout_s=5.0, max_retries=0)
    with AgenticMemory(replace(settings, llm=llm_settings), tenant=memory.tenant,
                       store=memory._store if memory.admin.kind == "embedded" else None) as mem:
        note = mem.add("Alice adopted a beagle named Max in May.")
        assert mem.wait(60)
        mem.search("beagle", k=3)
        queue = {p.attributes.get("amem.operation"): p for p in points("amem.operation.duration")}
        gauge = points("amem.analysis.queue")
    found = spans.get_finished_spans()
    add = named(found, "amem.add")[0]
    assert add.attributes["amem.tenant"] == memory.tenant and add.attributes["amem.analysis"] == "pending"
    assert add.attributes["amem.created"] is True
    analysis = next(s for s in named(found, "amem.analysis") if s.attributes["amem.note_id"] == note.id)
    assert analysis.attributes["amem.analysis.outcome"] == "applied"
    call = next(s for s in named(found, "chat scripted") if s.parent and s.parent.span_id == analysis.context.span_id)
    assert call.kind == trace.SpanKind.CLIENT
    assert call.attributes["gen_ai.operation.name"] == "chat" and call.attributes["gen_ai.provider.name"] == "openai"
    assert call.attributes["gen_ai.request.model"] == "scripted" and call.attributes["amem.llm.task"] == "analyse_note"
    assert call.attributes["gen_ai.usage.input_tokens"] > 0 and call.attributes["gen_ai.usage.output_tokens"] > 0
    assert call.attributes["server.address"] == "127.0.0.1"
    assert named(found, "amem.search")[0].attributes["amem.hits"] >= 1
    # No content in any span: ids, counts and outcomes only.
    assert not any("beagle" in str(value) for span in found for value in span.attributes.values())
    assert {"add", "search"} <= set(queue)
    tokens = {p.attributes["gen_ai.token.type"] for p in points("gen_ai.client.token.usage")}
    assert tokens == {"input", "output"}
    assert any(p.attributes["gen_ai.request.model"] == "scripted" for p in points("gen_ai.client.operation.duration"))
    assert gauge and gauge[0].value == 0
    assert any(p.attributes["amem.analysis.outcome"] == "applied" for p in points("amem.analysis.count"))


def test_a_failed_model_call_is_a_failed_span_with_its_error_type(
    memory: AgenticMemory, settings: Settings, llm: ScriptedLLM, spans: InMemorySpanExporter,
) -> None:
    llm_settings = LLMSettings(base_url=llm.base_url, model="scripted", backoff_s=0.0, timeout_s=5.0, max_retries=0,
                               background=False)
    llm.script(Fault(429))
    with AgenticMemory(replace(settings, llm=llm_settings), tenant=memory.tenant,
                       store=memory._store if memory.admin.kind == "embedded" else None) as mem:
        assert mem.add("Bob plays the violin in a youth orchestra.").analysis == "degraded"
    call = named(spans.get_finished_spans(), "chat scripted")[0]
    assert call.status.status_code == trace.StatusCode.ERROR and call.attributes["error.type"] == "rate_limited"
    failed = [p for p in points("gen_ai.client.operation.duration") if p.attributes.get("error.type") == "rate_limited"]
    assert failed
