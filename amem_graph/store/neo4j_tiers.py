"""The MemoryOS tier primitives on Neo4j: pages, dialogue chains, segments and persona facts, as named
statements inside the caller's transaction (a mixin of the store's transaction, `Neo4jTx`)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from neo4j import Record

from ..models import Fact, Page, Segment
from .base import FactWrite, LastPage, PageWrite, SegmentState, SegmentWrite, SessionPages
from .lucene import PAGE_FIELDS, lucene_query
from .records import fact_from_record, page_from_record, segment_from_record, time_of

EVERY = 1_000_000  # a LIMIT that keeps every row


def _array(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


def _list(vector: Sequence[float] | None) -> list[float] | None:
    return None if vector is None else [float(v) for v in vector]


class Neo4jTiers:
    """Tier primitives over `run` (one named statement in the transaction, scoped by the tenant)."""

    run: Callable[..., list[Record]]
    _each: Callable[..., list[Record]]  # a statement over rows, no round trip for none

    # -- pages ----------------------------------------------------------------------------------

    def last_page(self, session_id: str) -> LastPage | None:
        rows = self.run("page/last", session_id=session_id)
        if not rows:
            return None
        row = rows[0]
        return LastPage(
            page_from_record(row["page"]), _array(row["embedding"]), tuple(row["chain_keywords"] or ()),
            tuple((user or "", assistant or "") for user, assistant in row["window"]),
        )

    def add_page(self, page: PageWrite, now: datetime) -> int:
        rows = self.run(
            "page/create", id=page.id, session_id=page.session_id, user_text=page.user_text,
            assistant_text=page.assistant_text, at=page.at, keywords=list(page.keywords), embedding=_list(page.embedding),
            chain_id=page.chain_id, chain_summary=page.chain_summary, chain_keywords=list(page.chain_keywords),
            analysis=page.analysis, model=page.model, now=now, neighbourhood=page.neighbourhood, turn=page.turn,
        )
        return int(rows[0]["seq"])

    def stm_pages(self, session_id: str, *, with_embedding: bool = False) -> list[tuple[Page, np.ndarray | None]]:
        rows = self.run("page/stm", session_id=session_id, with_embedding=with_embedding)
        return [(page_from_record(r["page"]), None if r["embedding"] is None else _array(r["embedding"])) for r in rows]

    def pages(self, *, limit: int, offset: int = 0) -> list[Page]:
        return [page_from_record(r["page"]) for r in self.run("page/all", limit=limit, offset=offset)]

    def sessions(self) -> list[SessionPages]:
        return [
            SessionPages(r["session_id"], int(r["pages"]), int(r["stm"]), time_of(r["latest"]))
            for r in self.run("page/sessions")
        ]

    def page_search(self, query: str, k: int, *, fields: Mapping[str, float] | None = None) -> list[tuple[Page, float]]:
        terms = lucene_query(query, fields, PAGE_FIELDS)
        if not terms:
            return []
        return [(page_from_record(r["page"]), float(r["score"])) for r in self.run("page/fulltext_search", query=terms, k=k)]

    def page_vector_search(self, vector: Sequence[float], k: int) -> list[tuple[Page, float]]:
        rows = self.run("page/vector_search", vector=_list(vector), k=k)
        return [(page_from_record(r["page"]), float(r["score"])) for r in rows]

    def page_windows(self, page_ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        rows = self._each("page/windows", "ids", page_ids)
        return {r["id"]: [(p["user_text"] or "", p["assistant_text"] or "") for p in r["window"]] for r in rows}

    # -- segments -------------------------------------------------------------------------------

    def segments(
        self, *, vector: Sequence[float] | None = None, limit: int | None = None, include_archived: bool = False
    ) -> list[tuple[Segment, float | None]]:
        rows = self.run(
            "segment/candidates", vector=_list(vector), limit=EVERY if limit is None else limit,
            include_archived=include_archived,
        )
        return [(segment_from_record(r["segment"], 0.0), r["cosine"]) for r in rows]

    def segment_state(self, segment_id: str) -> SegmentState | None:
        rows = self.run("segment/state", id=segment_id)
        if not rows:
            return None
        row = rows[0]
        return SegmentState(
            embedding=_array(row["embedding"]), keywords=tuple(row["keywords"] or ()),
            keyword_counts=tuple(int(c) for c in row["keyword_counts"] or ()), summary=row["summary"] or "",
            pages=int(row["pages"]), archived=bool(row["archived"]), promotions=int(row["promotions"] or 0),
            visits=int(row["visits"] or 0), interaction_len=int(row["interaction_len"] or 0),
        )

    def join_segment(self, page_id: str, segment: SegmentWrite, now: datetime) -> None:
        self.run(
            "segment/join", page_id=page_id, now=now, embedding=_list(segment.embedding),
            segment={
                "id": segment.id, "summary": segment.summary, "keywords": list(segment.keywords),
                "keyword_counts": list(segment.keyword_counts), "analysis": segment.analysis, "model": segment.model,
            },
        )


    def segment_pages(self, segment_id: str, *, unpromoted: bool = False) -> list[Page]:
        return [page_from_record(r["page"]) for r in self.run("segment/pages", id=segment_id, unpromoted=unpromoted)]

    def best_pages(self, segment_ids: Sequence[str], vector: Sequence[float], k: int) -> list[tuple[str, Page, float]]:
        rows = self._each("segment/best_pages", "segment_ids", segment_ids, vector=_list(vector), k=k)
        return [(r["segment_id"], page_from_record(r["page"]), float(r["cosine"])) for r in rows]


    def mark_promoted(self, segment_id: str, derived: Sequence[tuple[str, str]], now: datetime) -> None:
        rows = [{"page_id": page_id, "note_id": note_id} for page_id, note_id in derived]
        self.run("segment/promoted", segment_id=segment_id, now=now, derived=rows)

    # -- persona --------------------------------------------------------------------------------

    def facts(
        self, assistant: str | None, *, kinds: Sequence[str] | None = None, vector: Sequence[float] | None = None,
        limit: int = 10_000, with_embedding: bool = False,
    ) -> list[tuple[Fact, float | None, np.ndarray | None]]:
        rows = self.run(
            "persona/facts", assistant=assistant, kinds=None if kinds is None else list(kinds), vector=_list(vector),
            limit=limit, with_embedding=with_embedding,
        )
        return [
            (fact_from_record(r["fact"], r["pages"], r["segments"]), r["cosine"],
             None if r["embedding"] is None else _array(r["embedding"]))
            for r in rows
        ]

    def write_facts(self, segment_id: str, facts: Sequence[FactWrite], now: datetime) -> None:
        reinforced = [
            {"existing_id": f.existing_id, "page_id": f.page_id, "confidence": f.confidence}
            for f in facts if f.existing_id is not None
        ]
        created = [
            {
                "id": f.id or str(uuid.uuid4()), "kind": f.kind, "text": f.text, "page_id": f.page_id,
                "confidence": f.confidence, "assistant": f.assistant, "analysis": f.analysis, "model": f.model,
                "supersedes": f.supersedes, "reason": f.reason, "embedding": _list(f.embedding),
            }
            for f in facts if f.existing_id is None
        ]
        self._each("persona/reinforce", "rows", reinforced, segment_id=segment_id, now=now)
        self._each("persona/create", "rows", created, segment_id=segment_id, now=now)


