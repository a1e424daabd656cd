"""`bench background`: writes that do not wait for the model. Through a scripted OpenAI-compatible server that
answers every analysis after `latency_s`, per store: how long `add` takes with the analysis queued (and, beside it,
inline) and whether a search finds the note by its content as soon as `add` returns; how long `add_turn` takes with
the tiers' model work behind it (and inline); how fast an analysed import of
one LoCoMo conversation drains with `concurrency` calls in flight, and the calls it costs a note; how long another
tenant's one note waits behind that import (fairness); and, with an instant model, what analysing in the background
changes in the network against the inline path in the same order (links, evolutions, supersessions)."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..api import AgenticMemory
from ..ingest import locomo
from ..models import NoteInput
from ..settings import LLMSettings, Settings
from . import locomo_recall
from .scripted_llm import ScriptedLLM, slow_answer
from .texts import sentences
from .timing import percentiles

WARMUP_ADDS = 10  # planned statements, the embedding model, the worker's threads: not counted
TURNS = 30  # add_turn calls with the tiers' model work behind them
INLINE_ADDS = 10  # each waits for the model: enough for a p95 beside the queued adds
STRUCTURE_TURNS = 150  # the inline-against-background comparison, with a model that answers at once
SYNTHETIC_TURNS = 400  # without --data: about one LoCoMo conversation


@contextmanager
def _model(latency_s: float) -> Iterator[ScriptedLLM]:
    with ScriptedLLM(slow_answer(latency_s)) as server:
        yield server


def _analyses(server: ScriptedLLM) -> int:
    return sum(1 for r in server.requests
               if ((r.get("response_format") or {}).get("json_schema") or {}).get("name") == "analyse_note")


def _memory(settings: Settings, server: ScriptedLLM, concurrency: int, **llm: Any) -> AgenticMemory:
    return AgenticMemory(replace(settings, llm=LLMSettings(base_url=server.base_url, model="scripted", backoff_s=0.0,
                                                           timeout_s=60.0, concurrency=concurrency, **llm)))


def recall(settings: Settings, data: Path, *, concurrency: int = 8) -> dict[str, Any]:
    """Recall@10 on every conversation of `data` (bench locomo's measure), its turns added inline and added with
    the analysis queued (then drained), with a scripted model that answers at once, the same answers both ways."""
    run_id = uuid.uuid4().hex[:10]
    out: dict[str, Any] = {}
    with _model(0.0) as server:
        for path, background in (("inline", False), ("background", True)):
            prefix = f"bench-bg-{run_id}-{path}-"
            with _memory(settings, server, concurrency, background=background) as memory:
                try:
                    measured = locomo_recall.run(memory, data, prefix=prefix, ks=(10,), ablations=False)
                    out[path] = {"recall@10": measured["overall"]["recall@10"],
                                 "by_category": {c: r["recall@10"] for c, r in measured["by_category"].items()},
                                 "calls_per_note": round(_analyses(server) / sum(
                                     r["notes"] for r in measured["ingest"]["conversations"].values()), 4)}
                    server.requests.clear()
                finally:
                    for tenant in [t for t in memory.admin.tenants() if t.startswith(prefix)]:
                        memory.admin.delete_tenant(tenant)
    out["difference"] = round(out["background"]["recall@10"] - out["inline"]["recall@10"], 2)
    return out


def run(settings: Settings, data: Path | None = None, *, latency_s: float = 1.5, concurrency: int = 8,
        adds: int = 50, conversation: str | None = None, limit: int | None = None) -> dict[str, Any]:
    """The figures on the store `settings` open (module docstring); every tenant it writes is deleted after.
    Without `data`, SYNTHETIC_TURNS generated chat turns stand for the conversation."""
    if data is None:
        name, turns = "synthetic", [NoteInput(content=text) for text in sentences(limit or SYNTHETIC_TURNS)]
    else:
        chosen = locomo.pick(locomo.load(data), conversation)
        name, turns = str(chosen.get("sample_id")), locomo.turns(chosen)[:limit]
    run_id = uuid.uuid4().hex[:10]
    out: dict[str, Any] = {"benchmark": "background", "store": settings.store_kind, "llm_latency_s": latency_s,
                           "concurrency": concurrency, "conversation": name}
    with _model(latency_s) as server, _memory(settings, server, concurrency) as memory:
        tenants = [f"bench-bg-{run_id}-{name}" for name in ("warm", "adds", "import", "other", "turns")]
        try:
            out |= _adds(memory, turns, adds, tenants[0], tenants[1])
            out |= _turns(memory, turns, TURNS, tenants[4])
            out |= _import(memory, server, turns, tenants[2], tenants[3], latency_s)
        finally:
            for tenant in tenants:
                memory.admin.delete_tenant(tenant)
    out["structure"] = _structure(settings, turns[:STRUCTURE_TURNS], concurrency, run_id)
    return out


def _adds(memory: AgenticMemory, turns: list[NoteInput], n: int, warm: str, tenant: str) -> dict[str, Any]:
    """Queued adds, each then searched by its content; inline adds beside them."""
    for note in turns[:WARMUP_ADDS]:
        memory.add(note.content, tenant=warm, event_time=note.event_time)
    memory.wait(600, tenant=warm)
    queued_ms, found = [], 0
    for note in turns[WARMUP_ADDS : WARMUP_ADDS + n]:
        began = time.perf_counter()
        added = memory.add(note.content, tenant=tenant, event_time=note.event_time, session=note.session,
                           speaker=note.speaker, source=note.source)
        queued_ms.append((time.perf_counter() - began) * 1000)
        hits = memory.search(added.content, tenant=tenant, k=5, count_use=False)
        found += any(hit.note.id == added.id for hit in hits)
    drained = memory.wait(600, tenant=tenant)
    inline_ms = []
    for note in turns[WARMUP_ADDS + n : WARMUP_ADDS + n + INLINE_ADDS]:
        began = time.perf_counter()
        memory.add(note.content, tenant=tenant, event_time=note.event_time, background=False)
        inline_ms.append((time.perf_counter() - began) * 1000)
    queued = percentiles(queued_ms)
    return {"adds": len(queued_ms), "add_p95_ms": queued["p95"], "add_ms": queued,
            "found_right_after_add": round(found / max(1, len(queued_ms)), 4), "adds_drained": drained,
            "inline_add_ms": percentiles(inline_ms)}


def _turns(memory: AgenticMemory, turns: list[NoteInput], n: int, tenant: str) -> dict[str, Any]:
    """Dialogue turns through the tiers with their model work behind them, then inline beside them."""
    queued_ms, inline_ms = [], []
    for note in turns[:n]:
        began = time.perf_counter()
        memory.add_turn(note.content, tenant=tenant, session_id=note.session or "bench", at=note.event_time)
        queued_ms.append((time.perf_counter() - began) * 1000)
    settled = memory.wait(600, tenant=tenant)
    for note in turns[n : n + INLINE_ADDS]:
        began = time.perf_counter()
        memory.add_turn(note.content, tenant=tenant, session_id=note.session or "bench", at=note.event_time,
                        background=False)
        inline_ms.append((time.perf_counter() - began) * 1000)
    queued = percentiles(queued_ms)
    return {"turns": len(queued_ms), "add_turn_p95_ms": queued["p95"], "add_turn_ms": queued,
            "turns_settled": settled, "inline_add_turn_ms": percentiles(inline_ms)}


def _import(memory: AgenticMemory, server: ScriptedLLM, turns: list[NoteInput], tenant: str, other: str,
            latency_s: float) -> dict[str, Any]:
    """An analysed import of the conversation, and another tenant's one note queued behind it."""
    calls = _analyses(server)
    began = time.perf_counter()
    ids = memory.add_many(turns, tenant=tenant, analyse=True)
    stored_s = time.perf_counter() - began
    queued_at = time.perf_counter()
    late = memory.add("Bob: the orchestra rehearses on Friday at the old church.", tenant=other)
    while memory.get(late.id, tenant=other).analysis == "pending" and time.perf_counter() - queued_at < 600:
        time.sleep(0.05)
    other_wait_s = time.perf_counter() - queued_at
    drained = memory.wait(3_600, tenant=tenant)
    seconds = time.perf_counter() - began
    analysed = Counter(n.analysis for n in memory.list(tenant=tenant, limit=1_000))
    calls = _analyses(server) - calls - 1  # the other tenant's note made one
    return {
        "import_notes": len(ids), "import_stored_s": round(stored_s, 2), "import_drained": drained,
        "analysed_per_s": round(len(ids) / seconds, 3), "calls_per_note": round(calls / max(1, len(ids)), 4),
        "analysed_as": dict(analysed),
        "max_calls_in_flight": server.max_in_flight,
        "other_tenant_wait_s": round(other_wait_s, 2),
        "other_tenant_wait_calls": round(other_wait_s / latency_s, 2) if latency_s else None,
    }


def _structure(settings: Settings, turns: list[NoteInput], concurrency: int, run_id: str) -> dict[str, Any]:
    """The same turns added inline (one at a time, each analysed before the next) and queued (analysed
    `concurrency` at a time behind the adds), with a model that answers at once: what the network holds."""
    out = {}
    with _model(0.0) as server:
        for path, background in (("inline", False), ("background", True)):
            tenant = f"bench-bg-{run_id}-{path}"
            with _memory(settings, server, concurrency) as memory:
                try:
                    calls = _analyses(server)
                    for note in turns:
                        memory.add(note.content, tenant=tenant, event_time=note.event_time, session=note.session,
                                   speaker=note.speaker, source=note.source, background=background)
                    memory.wait(600, tenant=tenant)
                    stats = memory.stats(tenant=tenant)
                    out[path] = {
                        "notes": len(turns), "calls_per_note": round((_analyses(server) - calls) / len(turns), 4),
                        "links": {k: v for k, v in stats.relationships.items()
                                  if k in ("RELATES_TO", "ELABORATES", "SUPPORTS", "CONTRADICTS", "FOLLOWS", "SAME_ENTITY")},
                        "note_versions": stats.labels.get("NoteVersion", 0),
                        "evolutions": stats.labels.get("Evolution", 0),
                        "supersessions": stats.relationships.get("SUPERSEDED_BY", 0),
                    }
                finally:
                    memory.admin.delete_tenant(tenant)
    return out
