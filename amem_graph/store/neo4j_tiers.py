"""The MemoryOS tiers in Neo4j: pages, dialogue chains, segments and persona facts, as named statements.

A mixin of Neo4jStore (it shares its driver, retries and error translation), kept apart so that the notes
backend and the tiers backend each read in one file."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from neo4j import ManagedTransaction, Record

from .. import cypher, validation
from ..models import Fact, Page, Segment
from .base import FactWrite, LastPage, PageWrite, SegmentState, SegmentWrite
from .lucene import PAGE_FIELDS, lucene_query
from .records import fact_from_record, page_from_record, segment_from_record


def _array(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


class Neo4jTiers:
    """TierStore over Neo4jStore's plumbing (`_run`, `_write_transaction`, `_require_dimension`)."""

    _run: Callable[..., list[Record]]
    _write_transaction: Callable[[str, Callable[[ManagedTransaction], Any]], Any]
    _require_dimension: Callable[[], int]

    def _vector(self, vector: np.ndarray | None, what: str = "query vector") -> list[float] | None:
        return None if vector is None else validation.vector(vector, self._require_dimension(), what)

    # -- pages ----------------------------------------------------------------------------------

    def last_page(self, tenant: str, session_id: str) -> LastPage | None:
        rows = self._run("page/last", tenant=tenant, session_id=session_id)
        if not rows:
            return None
        row = rows[0]
        return LastPage(
            page_from_record(row["page"]), _array(row["embedding"]), tuple(row["chain_keywords"] or ()),
            tuple((user or "", assistant or "") for user, assistant in row["window"]),
        )

    def add_page(self, tenant: str, page: PageWrite, *, now: datetime) -> int:
        rows = self._run(
            "page/create", write=True, tenant=tenant, id=page.id, session_id=page.session_id,
            user_text=page.user_text, assistant_text=page.assistant_text, at=page.at, keywords=list(page.keywords),
            embedding=self._vector(page.embedding, "page embedding"), chain_id=page.chain_id,
            chain_summary=page.chain_summary, chain_keywords=list(page.chain_keywords), analysis=page.analysis, model=page.model, now=now,
            neighbourhood=page.neighbourhood, turn=page.turn,
        )
        return int(rows[0]["seq"])

    def stm_pages(self, tenant: str, session_id: str) -> list[Page]:
        return [page_from_record(r["page"]) for r in self._run("page/stm", tenant=tenant, session_id=session_id)]

    def overflow(self, tenant: str, session_id: str, capacity: int) -> list[tuple[Page, np.ndarray]]:
        rows = self._run("page/overflow", tenant=tenant, session_id=session_id, capacity=capacity)
        return [(page_from_record(r["page"]), _array(r["embedding"])) for r in rows]

    def pages(self, tenant: str, *, limit: int, offset: int = 0) -> list[Page]:
        return [page_from_record(r["page"]) for r in self._run("page/all", tenant=tenant, limit=limit, offset=offset)]

    def page_search(
        self, tenant: str, query: str, k: int, *, fields: Mapping[str, float] | None = None
    ) -> list[tuple[Page, float]]:
        terms = lucene_query(query, fields, PAGE_FIELDS)
        if not terms:
            return []
        rows = self._run("page/fulltext_search", tenant=tenant, query=terms, k=k)
        return [(page_from_record(r["page"]), float(r["score"])) for r in rows]

    def page_vector_search(self, tenant: str, vector: np.ndarray, k: int) -> list[tuple[Page, float]]:
        rows = self._run("page/vector_search", tenant=tenant, vector=self._vector(vector), k=k)
        return [(page_from_record(r["page"]), float(r["score"])) for r in rows]

    def page_windows(self, tenant: str, page_ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        if not page_ids:
            return {}
        rows = self._run("page/windows", tenant=tenant, ids=list(page_ids))
        return {r["id"]: [(p["user_text"] or "", p["assistant_text"] or "") for p in r["window"]] for r in rows}

    def session_page_counts(self, tenant: str) -> dict[str, int]:
        return {r["session_id"]: int(r["pages"]) for r in self._run("page/session_counts", tenant=tenant)}

    def latest_session(self, tenant: str) -> str | None:
        rows = self._run("page/latest_session", tenant=tenant)
        return rows[0]["session_id"] if rows else None

    def sessions_with_stm(self, tenant: str) -> list[str]:
        return sorted(r["session_id"] for r in self._run("page/sessions_with_stm", tenant=tenant))

    # -- segments -------------------------------------------------------------------------------

    def segments(
        self, tenant: str, *, heat: Mapping[str, float], now: datetime, vector: np.ndarray | None = None,
        limit: int = 1_000, include_archived: bool = False,
    ) -> list[tuple[Segment, float | None]]:
        rows = self._run(
            "segment/candidates", tenant=tenant, heat=dict(heat), now=now, vector=self._vector(vector),
            limit=limit, include_archived=include_archived,
        )
        return [(segment_from_record(r["segment"], r["heat"]), r["cosine"]) for r in rows]

    def segment_state(self, tenant: str, segment_id: str) -> SegmentState | None:
        rows = self._run("segment/state", tenant=tenant, id=segment_id)
        if not rows:
            return None
        row = rows[0]
        return SegmentState(
            embedding=_array(row["embedding"]), keywords=tuple(row["keywords"] or ()),
            keyword_counts=tuple(int(c) for c in row["keyword_counts"] or ()), summary=row["summary"] or "",
            pages=int(row["pages"]),
        )

    def join_segment(self, tenant: str, page_id: str, segment: SegmentWrite, *, now: datetime) -> str:
        rows = self._run(
            "segment/join", write=True, tenant=tenant, page_id=page_id, expected_pages=segment.expected_pages,
            segment={
                "id": segment.id, "summary": segment.summary, "keywords": list(segment.keywords),
                "keyword_counts": list(segment.keyword_counts), "analysis": segment.analysis, "model": segment.model,
            },
            embedding=self._vector(segment.embedding, "segment embedding"), now=now,
        )
        if not rows or not rows[0]["waiting"]:
            return "moved"
        return "joined" if rows[0]["current"] else "conflict"

    def archive_coldest(self, tenant: str, capacity: int, *, heat: Mapping[str, float], now: datetime) -> list[str]:
        rows = self._run("segment/archive_coldest", write=True, tenant=tenant, capacity=capacity, heat=dict(heat), now=now)
        return [r["id"] for r in rows]

    def segment_pages(self, tenant: str, segment_id: str, *, unpromoted: bool = False) -> list[Page]:
        rows = self._run("segment/pages", tenant=tenant, id=segment_id, unpromoted=unpromoted)
        return [page_from_record(r["page"]) for r in rows]

    def best_pages(
        self, tenant: str, segment_ids: Sequence[str], vector: np.ndarray, k: int
    ) -> list[tuple[str, Page, float]]:
        if not segment_ids:
            return []
        rows = self._run(
            "segment/best_pages", tenant=tenant, segment_ids=list(segment_ids), vector=self._vector(vector), k=k
        )
        return [(r["segment_id"], page_from_record(r["page"]), float(r["cosine"])) for r in rows]

    def visit_segments(self, tenant: str, segment_ids: Sequence[str], *, now: datetime) -> None:
        if segment_ids:
            self._run("segment/visit", write=True, tenant=tenant, ids=list(segment_ids), now=now)

    def claim_segment(self, tenant: str, segment: Segment, *, now: datetime) -> bool:
        rows = self._run(
            "segment/claim", write=True, tenant=tenant, id=segment.id, promotions=segment.promotions,
            visits=segment.visits, interaction_len=segment.interaction_len, now=now,
        )
        return bool(rows)

    def mark_promoted(self, tenant: str, segment_id: str, derived: Sequence[tuple[str, str]], *, now: datetime) -> None:
        self._run(
            "segment/promoted", write=True, tenant=tenant, segment_id=segment_id, now=now,
            derived=[{"page_id": page_id, "note_id": note_id} for page_id, note_id in derived],
        )

    # -- persona --------------------------------------------------------------------------------

    def facts(
        self, tenant: str, assistant: str, *, kinds: Sequence[str] | None = None, vector: np.ndarray | None = None,
        limit: int = 10_000, with_embedding: bool = False,
    ) -> list[tuple[Fact, float | None, np.ndarray | None]]:
        rows = self._run(
            "persona/facts", tenant=tenant, assistant=assistant, kinds=None if kinds is None else list(kinds),
            vector=self._vector(vector), limit=limit, with_embedding=with_embedding,
        )
        return [
            (
                fact_from_record(r["fact"], r["pages"], r["segments"]), r["cosine"],
                None if r["embedding"] is None else _array(r["embedding"]),
            )
            for r in rows
        ]

    def write_facts(
        self, tenant: str, segment_id: str, facts: Sequence[FactWrite], *, capacity: int, now: datetime
    ) -> list[str]:
        dimension = self._require_dimension()
        reinforced = [
            {"existing_id": f.existing_id, "page_id": f.page_id, "confidence": f.confidence}
            for f in facts if f.existing_id is not None
        ]
        created = [
            {
                "id": f.id or str(uuid.uuid4()), "kind": f.kind, "text": f.text, "page_id": f.page_id,
                "confidence": f.confidence, "assistant": f.assistant, "analysis": f.analysis, "model": f.model,
                "supersedes": f.supersedes, "reason": f.reason,
                "embedding": validation.vector(f.embedding, dimension, "fact embedding") if f.embedding is not None else None,
            }
            for f in facts if f.existing_id is None
        ]
        params = {"tenant": tenant, "segment_id": segment_id, "now": now}

        def work(tx: ManagedTransaction) -> list[str]:
            if reinforced:
                tx.run(cypher.load("persona/reinforce"), {**params, "rows": reinforced}).consume()
            if created:
                tx.run(cypher.load("persona/create"), {**params, "rows": created}).consume()
            archived = tx.run(cypher.load("persona/archive"), {**params, "capacity": capacity})
            return [r["id"] for r in archived]

        return self._write_transaction("persona", work)

    def use_facts(self, tenant: str, fact_ids: Sequence[str], *, now: datetime) -> None:
        if fact_ids:
            self._run("persona/used", write=True, tenant=tenant, ids=list(fact_ids), now=now)
