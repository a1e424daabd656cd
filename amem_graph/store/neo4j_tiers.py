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
from .base import EVERY, FactWrite, PageWrite, SegmentWrite, SessionPages
from .bm25 import Document, boosts_of, query_terms
from .lucene import PAGE_FIELDS, lucene_query, query_words
from .neo4j_text import RESCORED, documents, rescored
from .records import fact_from_record, page_from_record, segment_from_record, time_of


def _array(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


def _list(vector: Sequence[float] | None) -> list[float] | None:
    return None if vector is None else [float(v) for v in vector]


class Neo4jTiers:
    """Tier primitives over `run` (one named statement in the transaction, scoped by the tenant)."""

    run: Callable[..., list[Record]]
    _each: Callable[..., list[Record]]  # a statement over rows, no round trip for none
    count_texts: Callable[[str, Mapping[str, Document], Mapping[str, Document]], None]  # neo4j_text.Neo4jText's
    flush_counts: Callable[[], None]

    # -- pages ----------------------------------------------------------------------------------

    def add_page(self, page: PageWrite, now: datetime) -> int:
        row = self.run(
            "page/create", id=page.id, session_id=page.session_id, user_text=page.user_text,
            assistant_text=page.assistant_text, at=page.at, keywords=list(page.keywords), embedding=_list(page.embedding),
            chain_id=page.chain_id, chain_summary=page.chain_summary, chain_keywords=list(page.chain_keywords),
            analysis=page.analysis, model=page.model, now=now, neighbourhood=page.neighbourhood, turn=page.turn,
            fields=list(PAGE_FIELDS),
        )[0]
        # The page's own text and the neighbourhood of the two before it change: the statistics move with them.
        before = documents("page_text", {c["id"]: c["was"] for c in row["changed"]})
        after = documents("page_text", {page.id: row["texts"], **{c["id"]: c["now"] for c in row["changed"]}})
        self.count_texts("page_text", before, after)
        return int(row["seq"])

    def pages(
        self, *, session: str | None = None, stm: bool = False, segment: str | None = None, unpromoted: bool = False,
        around: Sequence[str] | None = None, width: int = 2, limit: int = EVERY, offset: int = 0, with_embedding: bool = False,
        as_of: datetime | None = None,
    ) -> list[Page]:
        # A statement per selector, so that each reads through its own index.
        name = ("page/session" if session is not None else "segment/pages" if segment is not None
                else "page/around" if around is not None else "page/all")
        if around is not None and not around:
            return []
        rows = self.run(
            name, session_id=session, stm=stm, id=segment, unpromoted=unpromoted, ids=list(around or ()), width=width,
            limit=limit, offset=offset, with_embedding=with_embedding, as_of=as_of,
        )
        return [page_from_record(r["page"], r["embedding"]) for r in rows]

    def sessions(self, as_of: datetime | None = None) -> list[SessionPages]:
        return [
            SessionPages(r["session_id"], int(r["pages"]), int(r["stm"]), time_of(r["latest"]))
            for r in self.run("page/sessions", as_of=as_of)
        ]

    def page_search(
        self, k: int, *, text: str | None = None, fields: Mapping[str, float] | None = None,
        vector: Sequence[float] | None = None, segments: Sequence[str] | None = None, as_of: datetime | None = None,
    ) -> list[tuple[Page, float]]:
        if text is not None:
            terms = lucene_query(text, fields, PAGE_FIELDS)
            words = query_words(text)
            self.flush_counts()
            found = self.run(
                "page/fulltext_search", query=terms, fetch=max(k, RESCORED), as_of=as_of, terms=sorted(set(query_terms(words))),
                fields=list(boosts_of(fields, PAGE_FIELDS)),
            ) if terms else []
            return [(page_from_record(r["page"]), s)
                    for r, s in rescored(found, words, fields, "page_text", k, lambda r: r["page"]["id"])]
        elif vector is None:
            raise ValueError("page_search needs a text or a vector")
        elif segments is not None:
            rows = self._each("segment/best_pages", "segment_ids", list(segments), vector=_list(vector), k=k, as_of=as_of)
        else:
            rows = self.run("page/vector_search", vector=_list(vector), k=k, as_of=as_of)
        return [(page_from_record(r["page"]), float(r["score"])) for r in rows]

    # -- segments -------------------------------------------------------------------------------

    def segments(
        self, *, ids: Sequence[str] | None = None, vector: Sequence[float] | None = None, limit: int | None = None,
        include_archived: bool = False, with_embedding: bool = False, as_of: datetime | None = None,
    ) -> list[tuple[Segment, float | None]]:
        if ids is not None and not ids:
            return []
        rows = self.run(
            "segment/get" if ids is not None else "segment/candidates", ids=list(ids or ()), vector=_list(vector),
            limit=EVERY if limit is None else limit, include_archived=include_archived, with_embedding=with_embedding,
            as_of=as_of,
        )
        return [(segment_from_record(r["segment"], 0.0, r["embedding"]), r["cosine"]) for r in rows]

    def _join_segment(self, page_id: str, segment: SegmentWrite, now: datetime) -> None:
        self.run(
            "segment/join", page_id=page_id, now=now, embedding=_list(segment.embedding),
            segment={
                "id": segment.id, "summary": segment.summary, "keywords": list(segment.keywords),
                "keyword_counts": list(segment.keyword_counts), "analysis": segment.analysis, "model": segment.model,
            },
        )

    def _mark_promoted(self, segment_id: str, derived: Sequence[tuple[str, str]], now: datetime) -> None:
        rows = [{"page_id": page_id, "note_id": note_id} for page_id, note_id in derived]
        self.run("segment/promoted", segment_id=segment_id, now=now, derived=rows)

    # -- persona --------------------------------------------------------------------------------

    def facts(
        self, assistant: str | None, *, kinds: Sequence[str] | None = None, vector: Sequence[float] | None = None,
        limit: int = 10_000, with_embedding: bool = False, as_of: datetime | None = None,
    ) -> list[tuple[Fact, float | None, np.ndarray | None]]:
        rows = self.run(
            "persona/facts", assistant=assistant, kinds=None if kinds is None else list(kinds), vector=_list(vector),
            limit=limit, with_embedding=with_embedding, as_of=as_of,
        )
        return [
            (fact_from_record(r["fact"], r["pages"], r["segments"]), r["cosine"],
             None if r["embedding"] is None else _array(r["embedding"]))
            for r in rows
        ]

    def _write_facts(self, segment_id: str, facts: Sequence[FactWrite], now: datetime) -> None:
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
