"""`bench llm-cost`: LLM calls and tokens per added note (or, `--mode tiers`, per dialogue turn through the
MemoryOS tiers), and add latency without the LLM's time, over one LoCoMo conversation through the scripted
OpenAI-compatible server, or through the configured endpoint (`--llm configured`: a real model's latency,
token counts by its own tokenizer, and how often its answers degrade to the heuristic)."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..api import AgenticMemory
from ..embedding import Embedder
from ..errors import LLMNotConfigured
from ..ingest import locomo
from ..llm import LLMAnalyser, LLMClient
from ..llm.client import Usage
from ..llm.prompts import ANALYSIS_SCHEMA, PROMPT_VERSION
from ..llm.tokens import TOKENIZER, count_tokens
from ..settings import LLMSettings, Settings
from .scripted_llm import ScriptedLLM
from .timing import TimedEmbedder, ms, percentiles

OPERATION = "analyse_note"
WARMUP_NOTES = 20  # planned statements and JIT, as in a long-running service; not counted
WARMUP_NOTES_REAL_MODEL = 2  # a real model's seconds an answer buy little warm-up
LLM_SOURCES = ("scripted", "configured")
SEARCHES = 100


def _usage(client: LLMClient) -> dict[str, float]:
    """The analysis calls' usage so far (zeros before the first)."""
    return client.usage().get(OPERATION) or asdict(Usage())


@contextmanager
def llm_settings(settings: Settings, source: str) -> Iterator[LLMSettings]:
    """The scripted server on loopback, or the endpoint AMEM_LLM_* configure."""
    if source == "configured":
        if not settings.llm.configured:
            raise LLMNotConfigured("--llm configured needs AMEM_LLM_BASE_URL (e.g. eval \"$(amem-graph llm env)\")")
        yield settings.llm
        return
    with ScriptedLLM() as llm:
        yield LLMSettings(base_url=llm.base_url, model="scripted", backoff_s=0.0)


def run(settings: Settings, data: Path, *, conversation: str | None = None, limit: int | None = None,
        keep: bool = False, llm: str = "scripted", uncounted_adds: bool = True) -> dict[str, Any]:
    """`uncounted_adds`: first add a few notes to a tenant of their own, not counted, as a long-running service
    would have (off for `--cold`, which counts the first calls as they come)."""
    chosen = locomo.pick(locomo.load(data), conversation)
    notes = locomo.turns(chosen)[:limit]
    tenant = f"bench-llm-{uuid.uuid4().hex[:12]}"
    warmup_notes = 0 if not uncounted_adds else WARMUP_NOTES if llm == "scripted" else WARMUP_NOTES_REAL_MODEL
    analyses: Counter[str] = Counter()
    with llm_settings(settings, llm) as endpoint:
        llm_client = LLMClient(endpoint)
        embedder = TimedEmbedder(Embedder.of(settings))
        with llm_client, AgenticMemory(
            settings, tenant=tenant, analyser=LLMAnalyser(llm_client), embedder=embedder
        ) as memory:
            warmup = f"{tenant}-warmup"
            try:
                for note in notes[:warmup_notes]:
                    memory.add(note.content, source=note.source, event_time=note.event_time, tenant=warmup,
                               background=False)
            finally:
                memory.admin.delete_tenant(warmup)
            before = _usage(llm_client)
            add_ms: list[float] = []
            llm_ms: list[float] = []
            embed_ms: list[float] = []
            try:
                for note in notes:
                    llm_before, embed_before = _usage(llm_client)["seconds"], embedder.seconds
                    began = time.perf_counter()
                    # Inline: the call's cost and the add's own time around it (bench background: the queue's).
                    added = memory.add(note.content, source=note.source, event_time=note.event_time, background=False)
                    analyses[added.analysis or "none"] += 1
                    total = time.perf_counter() - began
                    spent = _usage(llm_client)["seconds"] - llm_before
                    add_ms.append((total - spent) * 1000)
                    llm_ms.append(spent * 1000)
                    embed_ms.append((embedder.seconds - embed_before) * 1000)
                after = _usage(llm_client)
                search_ms = [ms(memory.search, note.content[:60], k=10) for note in notes[:SEARCHES]]
                usage = {name: after[name] - before[name] for name in after}
                stats = memory.stats(tenant=tenant)
                entities = memory.entities.extractor
            finally:
                if not keep:
                    memory.admin.delete_tenant(tenant)
    n = len(notes)
    return {
        "benchmark": "llm-cost",
        "conversation": chosen.get("sample_id"),
        "notes": n,
        "calls_per_note": round(usage["calls"] / n, 4),
        "tokens_per_note": round((usage["prompt_tokens"] + usage["completion_tokens"]) / n, 1),
        "prompt_tokens_per_note": round(usage["prompt_tokens"] / n, 1),
        "completion_tokens_per_note": round(usage["completion_tokens"] / n, 1),
        "llm": llm, "model": endpoint.model, "response_format": endpoint.response_format,
        "analyses": dict(analyses), "degrade_rate": round(analyses["degraded"] / n, 4),
        "tokenizer": TOKENIZER if llm == "scripted" else "the server's usage (the model's own tokenizer)",
        "schema_tokens_in_prompt": count_tokens(json.dumps(ANALYSIS_SCHEMA, separators=(",", ":"))),
        "prompt_version": PROMPT_VERSION,
        "entities": entities,  # the extractor beside the LLM's names
        "embedding_backend": embedder.backend,
        "add_ms": percentiles(add_ms),  # the whole add except the LLM call
        "embed_ms": percentiles(embed_ms),  # of which the embedding model (content, then composites)
        "add_ms_without_embedding": percentiles([a - e for a, e in zip(add_ms, embed_ms, strict=True)]),
        "llm_ms": percentiles(llm_ms),
        "search_ms": percentiles(search_ms),  # after the adds: the first words of the first turns
        "failures": int(usage["failures"]),
        "warmup_notes": min(warmup_notes, n),
        "links": stats.relationships,
        "note_versions": stats.labels.get("NoteVersion", 0),
        "tenant": tenant if keep else None,
    }


TIER_OPERATIONS = ("tier_turn", "tier_segment", "tier_persona", OPERATION)


def run_tiers(settings: Settings, data: Path, *, conversation: str | None = None, limit: int | None = None,
              keep: bool = False, llm: str = "scripted") -> dict[str, Any]:
    """Every turn through `add_turn` with the LLM path on: continuity and chain summary per turn, a segment
    summary per page leaving the STM, persona extraction and note analysis per promotion. Sessions are
    flushed as they end, as `bench locomo --mode tiers` does: a flush's LLM calls are counted, its time is
    not a turn's."""
    chosen = locomo.pick(locomo.load(data), conversation)
    turns = locomo.turns(chosen)[:limit]
    tenant = f"bench-llm-tiers-{uuid.uuid4().hex[:12]}"
    with llm_settings(settings, llm) as endpoint:
        llm_client = LLMClient(endpoint)
        with llm_client, AgenticMemory(settings, tenant=tenant, analyser=LLMAnalyser(llm_client)) as memory:
            def llm_seconds() -> float:
                return sum(u["seconds"] for u in llm_client.usage().values())

            turn_ms: list[float] = []
            llm_ms: list[float] = []
            try:
                for position, turn in enumerate(turns):
                    spent_before, began = llm_seconds(), time.perf_counter()
                    # Inline: what each turn costs in calls and engine time (the background path makes the same calls
                    # behind the turn, the chain's excepted).
                    memory.add_turn(turn.content, session_id=str(turn.session), at=turn.event_time, background=False)
                    spent = llm_seconds() - spent_before
                    turn_ms.append((time.perf_counter() - began - spent) * 1000)
                    llm_ms.append(spent * 1000)
                    if position + 1 == len(turns) or turns[position + 1].session != turn.session:
                        memory.tiers.flush(session_id=str(turn.session))  # its calls count, its time not
                usage = llm_client.usage()
                stats = memory.stats(tenant=tenant)
                segments = memory.tiers.segments(include_archived=True)
            finally:
                if not keep:
                    memory.admin.delete_tenant(tenant)
    n = len(turns)
    per_operation = {
        op: {"calls_per_turn": round(u["calls"] / n, 4),
             "tokens_per_turn": round((u["prompt_tokens"] + u["completion_tokens"]) / n, 1),
             "failures": int(u["failures"])}
        for op, u in usage.items() if op in TIER_OPERATIONS
    }
    calls = sum(u["calls"] for op, u in usage.items() if op in TIER_OPERATIONS)
    tokens = sum(u["prompt_tokens"] + u["completion_tokens"] for op, u in usage.items() if op in TIER_OPERATIONS)
    return {
        "benchmark": "llm-cost", "mode": "tiers", "conversation": chosen.get("sample_id"), "turns": n,
        "calls_per_turn": round(calls / n, 4), "tokens_per_turn": round(tokens / n, 1),
        "per_operation": per_operation, "llm": llm, "model": endpoint.model,
        "tokenizer": TOKENIZER if llm == "scripted" else "the server's usage (the model's own tokenizer)",
        "add_turn_ms": percentiles(turn_ms),  # the whole add_turn (and flush) except the LLM calls
        "llm_ms": percentiles(llm_ms),
        "segments": len(segments), "promoted_segments": sum(1 for s in segments if s.promotions),
        "labels": stats.labels, "tenant": tenant if keep else None,
    }
