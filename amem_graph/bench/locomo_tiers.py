"""`bench locomo --mode tiers`: LoCoMo through the MemoryOS tiers. Each conversation is ingested as dialogue
pages (one page per turn, `add_turn`), each session flushed to mid-term memory when it ends, and questions
are answered from `context_for`; a page stands for its turn, so evidence recall counts turns as the notes
mode does."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from ..api import AgenticMemory
from ..models import NoteInput
from .timing import ms, percentiles

CONTEXT = {"segments": 5, "pages": 10, "facts": 10}  # notes and matches: the deepest k of the run


def ingest(memory: AgenticMemory, tenant: str, turns: Sequence[NoteInput]) -> tuple[dict[str, Any], dict[str, str]]:
    """Add every turn as a page, flushing each session at its end; a tenant that holds them all is reused.
    Returns the report (with add_turn latency) and page id → turn (dia_id)."""
    held = memory.tiers.pages(tenant=tenant, limit=len(turns) + 1)
    if len(held) == len(turns):
        return {"pages": len(held), "seconds": None, "reused": True}, _mapping(held, turns)
    if held:
        memory.admin.delete_tenant(tenant)  # a partial ingest cannot be resumed turn by turn: start again
    began = time.perf_counter()
    latencies: list[float] = []
    session = None
    for turn in turns:
        if session is not None and turn.session != session:
            memory.tiers.flush(tenant=tenant, session_id=session)
        session = turn.session
        latencies.append(ms(memory.add_turn, turn.content, tenant=tenant, session_id=str(turn.session), at=turn.event_time))
    memory.tiers.flush(tenant=tenant)
    seconds = time.perf_counter() - began
    pages = memory.tiers.pages(tenant=tenant, limit=len(turns) + 1)
    segments = memory.tiers.segments(tenant=tenant, include_archived=True)
    report = {
        "pages": len(pages), "seconds": round(seconds, 2), "reused": False, "add_turn_ms": percentiles(latencies),
        "segments": len(segments), "promoted_segments": sum(1 for s in segments if s.promotions),
        "notes": memory.stats(tenant=tenant).labels.get("Note", 0), "facts": len(memory.tiers.persona(tenant=tenant)),
    }
    return report, _mapping(pages, turns)


def _mapping(pages: Sequence[Any], turns: Sequence[NoteInput]) -> dict[str, str]:
    """Pages come back by session then seq; the turns of a session were added in order, so the n-th page of
    a session is its n-th turn."""
    by_session: dict[str, list[str]] = {}
    for turn in turns:
        by_session.setdefault(str(turn.session), []).append(str(turn.source))
    return {page.id: by_session[page.session_id][page.seq - 1] for page in pages}


def ranker(
    memory: AgenticMemory, mappings: dict[str, dict[str, str]], tenants: dict[str, str], depth: int, hops: int
) -> Callable[[str, Any], list[str]]:
    """Turn ids, best first, from the pages `context_for` ranks across the tiers. `mappings` and `tenants`
    are keyed by the notes tenant the questions name: page id → turn, and the tenant holding the pages."""

    def rank(tenant: str, question: Any) -> list[str]:
        context = memory.context_for(question.question, tenant=tenants[tenant], notes=depth, matches=depth, hops=hops, **CONTEXT)
        turns = mappings[tenant]
        return [turns[page_id] for page_id in context.ranked_pages() if page_id in turns]

    return rank
