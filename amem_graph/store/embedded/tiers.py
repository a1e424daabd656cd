"""The MemoryOS tier primitives in the embedded store: pages, dialogue chains, segments and persona facts,
each doing what its statement in cypher/page/, cypher/segment/ and cypher/persona/ does in Neo4j (a mixin of
the store's transaction, `EmbeddedTx`)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import numpy as np

from ...core.timeline import short_term_at, tier_held
from ...embedding import cosine
from ...models import Fact, Page, Segment
from ..base import EVERY, FactWrite, PageWrite, SegmentWrite, SessionPages
from ..lucene import PAGE_FIELDS, check_fields, query_words
from ..records import fact_from_record, page_from_record, segment_from_record
from .fulltext import best
from .graph import Node, PropertyGraph
from .view import StoreView

T = TypeVar("T")


class EmbeddedTiers:
    """Tier primitives over the store's graph for one tenant (`graph`, `tenant` and `_store` are the
    transaction's)."""

    graph: PropertyGraph
    tenant: str
    _store: StoreView

    # -- helpers ----------------------------------------------------------------------------------

    def _page(self, node: Node, with_embedding: bool = False) -> Page:
        """cypher/fragments/page_map.cypher: the page with its chain and segment."""
        chain, seg = self._owner(node, "Chain"), self._owner(node, "Segment")
        props = {**node.props, "chain_id": chain and chain.props["id"], "chain_summary": chain and chain.props.get("summary"),
                 "chain_keywords": chain and chain.props.get("keywords"), "segment_id": seg and seg.props["id"]}
        return page_from_record(props, node.props.get("embedding") if with_embedding else None)

    def _owner(self, page: Node, label: str) -> Node | None:
        for rel in self.graph.relationships(page, ["HAS_PAGE"], "in"):
            owner = self.graph.nodes[rel.start]
            if label in owner.labels:
                return owner
        return None

    def _pages_of(self, session_id: str) -> list[Node]:
        return sorted(self.graph.in_session("Page", self.tenant, session_id), key=lambda p: p.props["seq"])

    def _by_id(self, label: str, item_id: str) -> Node | None:
        node = self.graph.unique(label, id=item_id)
        return node if node is not None and node.props.get("tenant") == self.tenant else None

    def _neighbours(self, page: Node, direction: str, depth: int = 2) -> list[Node]:
        """The pages up to `depth` NEXT steps before ("in") or after ("out") a page, nearest first."""
        found, node = [], page
        for _ in range(depth):
            step = next(iter(self.graph.relationships(node, ["NEXT"], direction)), None)
            if step is None:
                break
            node = self.graph.nodes[step.start if direction == "in" else step.end]
            found.append(node)
        return found

    # -- pages ------------------------------------------------------------------------------------

    def add_page(self, page: PageWrite, now: datetime) -> int:
        """cypher/page/create.cypher."""
        pages = self._pages_of(page.session_id)
        last = pages[-1] if pages else None
        node = self.graph.create_node(["Page"], {
            "id": page.id, "tenant": self.tenant, "session_id": page.session_id,
            "seq": (last.props["seq"] if last else 0) + 1, "user_text": page.user_text,
            "assistant_text": page.assistant_text, "at": page.at, "created_at": now, "keywords": list(page.keywords),
            "tier": "stm", "analysis": page.analysis, "model": page.model, "neighbourhood": page.neighbourhood,
            "embedding": np.asarray(page.embedding, dtype=np.float32),
        })
        if last is not None:
            self.graph.create_rel("NEXT", last, node)
        chain = self.graph.unique("Chain", id=page.chain_id)
        if chain is None:
            chain = self.graph.create_node(["Chain"], {"id": page.chain_id, "tenant": self.tenant,
                                                       "session_id": page.session_id, "created_at": now, "pages": 0})
        self.graph.set(chain, summary=page.chain_summary, keywords=list(page.chain_keywords), updated_at=now,
                       pages=chain.props.get("pages", 0) + 1)
        self.graph.create_rel("HAS_PAGE", chain, node)
        for before in self._neighbours(node, "in"):
            current = before.props.get("neighbourhood")
            self.graph.set(before, neighbourhood=(current + "\n" if current is not None else "") + page.turn)
        return int(node.props["seq"])

    def pages(
        self, *, session: str | None = None, stm: bool = False, segment: str | None = None, unpromoted: bool = False,
        around: Sequence[str] | None = None, width: int = 2, limit: int = EVERY, offset: int = 0, with_embedding: bool = False,
        as_of: datetime | None = None,
    ) -> list[Page]:
        """cypher/page/session.cypher, segment/pages.cypher, page/around.cypher and page/all.cypher."""
        if session is not None:
            newest = [p for p in reversed(self._pages_of(session)) if self._waiting(p, stm, as_of)]
            chosen = newest[offset: offset + limit][::-1]
        else:
            ordered = sorted(self._selected(segment, unpromoted, around, width, as_of),
                             key=lambda p: (p.props["session_id"], p.props["seq"]))
            chosen = ordered[offset: offset + limit]
        return [self._page(p, with_embedding) for p in chosen]

    @staticmethod
    def _waiting(page: Node, stm: bool, as_of: datetime | None) -> bool:
        """A session's page selected: short-term (with `stm`), and with `as_of` recorded by then and short-term then."""
        if as_of is None:
            return not stm or page.props.get("tier") == "stm"
        return tier_held(page.props, as_of) and (not stm or short_term_at(page.props, as_of))

    def _selected(
        self, segment: str | None, unpromoted: bool, around: Sequence[str] | None, width: int, as_of: datetime | None = None,
    ) -> Iterable[Node]:
        if segment is not None:
            pages = self._segment_pages(segment, as_of)
            return [p for p in pages if not unpromoted or p.props.get("promoted_at") is None]
        if around is not None:
            centres = [c for c in (self._by_id("Page", page_id) for page_id in around) if c is not None]
            return {p.key: p for c in centres for p in self._pages_of(c.props["session_id"])
                    if abs(p.props["seq"] - c.props["seq"]) <= width}.values()
        return self.graph.labelled("Page", self.tenant)

    def _segment_pages(self, segment_id: str, as_of: datetime | None = None) -> list[Node]:
        """A segment's pages; with `as_of`, those that had joined it by then."""
        s = self._by_id("Segment", segment_id)
        pages = [self.graph.nodes[r.end] for r in self.graph.relationships(s, ["HAS_PAGE"])] if s else []
        return pages if as_of is None else [p for p in pages if not short_term_at(p.props, as_of)]

    def sessions(self, as_of: datetime | None = None) -> list[SessionPages]:
        """cypher/page/sessions.cypher."""
        found: dict[str, list[Node]] = {}
        for page in self.graph.labelled("Page", self.tenant):
            if as_of is None or tier_held(page.props, as_of):
                found.setdefault(page.props["session_id"], []).append(page)
        return [
            SessionPages(session, len(pages), sum(self._waiting(p, True, as_of) for p in pages),
                         max((p.props["created_at"] for p in pages if p.props.get("created_at")), default=None))
            for session, pages in found.items()
        ]

    def page_search(
        self, k: int, *, text: str | None = None, fields: Mapping[str, float] | None = None,
        vector: Sequence[float] | None = None, segments: Sequence[str] | None = None, as_of: datetime | None = None,
    ) -> list[tuple[Page, float]]:
        if text is not None:
            return self._text_search(text, k, fields, as_of)
        if vector is None:
            raise ValueError("page_search needs a text or a vector")
        if segments is None:
            pages = self.graph.labelled("Page", self.tenant)
            return self._nearest([p for p in pages if as_of is None or tier_held(p.props, as_of)], vector, k)
        return [hit for segment_id in sorted(segments)
                for hit in self._nearest(self._segment_pages(segment_id, as_of), vector, k)]

    def _text_search(
        self, text: str, k: int, fields: Mapping[str, float] | None, as_of: datetime | None = None,
    ) -> list[tuple[Page, float]]:
        """cypher/page/fulltext_search.cypher."""
        check_fields(fields, PAGE_FIELDS)
        words = query_words(text)
        if not words:
            return []
        scores = self._store.page_scores(self.tenant, words, fields)
        found = best(((key, s) for key, s in scores.items() if as_of is None or tier_held(self.graph.nodes[key].props, as_of)),
                     k, lambda key: self.graph.nodes[key].props["id"])
        return [(self._page(self.graph.nodes[key]), float(s)) for key, s in found]

    def _nearest(self, pages: Iterable[Node], vector: Any, k: int) -> list[tuple[Page, float]]:
        """cypher/page/vector_search.cypher over `pages`."""
        scored = [(p, cosine(p.props["embedding"], vector)) for p in pages if p.props.get("embedding") is not None]
        scored.sort(key=lambda pair: (-pair[1], pair[0].key))
        return [(self._page(p), s) for p, s in scored[:k]]

    # -- segments ---------------------------------------------------------------------------------

    def segments(
        self, *, ids: Sequence[str] | None = None, vector: Sequence[float] | None = None, limit: int | None = None,
        include_archived: bool = False, with_embedding: bool = False, as_of: datetime | None = None,
    ) -> list[tuple[Segment, float | None]]:
        """cypher/segment/get.cypher (with `ids`) and segment/candidates.cypher."""
        found = [self._by_id("Segment", i) for i in dict.fromkeys(ids)] if ids is not None else self.graph.labelled("Segment", self.tenant)
        rows = [
            (s, None if vector is None else cosine(s.props["embedding"], vector)) for s in found
            if s is not None and (tier_held(s.props, as_of) if as_of is not None
                                  else include_archived or s.props.get("archived_at") is None)
        ]
        rows.sort(key=lambda r: r[0].props["id"])
        if vector is not None:
            rows.sort(key=lambda r: -(r[1] or 0.0))
        return [(segment_from_record(s.props, 0.0, s.props["embedding"] if with_embedding else None), c)
                for s, c in rows[:limit]]

    def _join_segment(self, page_id: str, segment: SegmentWrite, now: datetime) -> None:
        page = self._by_id("Page", page_id)
        if page is None:
            return
        s = self._by_id("Segment", segment.id) or self.graph.create_node(["Segment"], {
            "id": segment.id, "tenant": self.tenant, "created_at": now, "pages": 0, "visits": 0, "interaction_len": 0,
            "promotions": 0,
        })
        self.graph.set(s, summary=segment.summary, keywords=list(segment.keywords),
                       keyword_counts=list(segment.keyword_counts), analysis=segment.analysis, model=segment.model,
                       pages=s.props["pages"] + 1, interaction_len=s.props["interaction_len"] + 1, last_access=now,
                       updated_at=now, embedding=np.asarray(segment.embedding, dtype=np.float32))
        self.graph.set(page, tier="mtm", joined_at=now)
        self.graph.create_rel("HAS_PAGE", s, page)

    def _mark_promoted(self, segment_id: str, derived: Sequence[tuple[str, str]], now: datetime) -> None:
        s = self._by_id("Segment", segment_id)
        if s is None:
            return
        for page_id, note_id in derived:
            page, note = self._by_id("Page", page_id), self._by_id("Note", note_id)
            if page is None or note is None:
                continue
            for target in (page, s):
                if not any(r.end == target.key for r in self.graph.relationships(note, ["DERIVED_FROM"])):
                    self.graph.create_rel("DERIVED_FROM", note, target)
            self.graph.set(page, promoted_at=now)

    # -- persona ----------------------------------------------------------------------------------

    def facts(
        self, assistant: str | None, *, kinds: Sequence[str] | None = None, vector: Sequence[float] | None = None,
        limit: int = 10_000, with_embedding: bool = False, as_of: datetime | None = None,
    ) -> list[tuple[Fact, float | None, np.ndarray | None]]:
        """cypher/persona/facts.cypher."""
        rows = []
        for f in self.graph.labelled("Fact", self.tenant):
            p = f.props
            active = (p.get("archived_at") is None and p.get("invalid_at") is None) if as_of is None else tier_held(p, as_of)
            if not active:
                continue
            other = p["kind"] == "assistant_knowledge" and assistant is not None and p.get("assistant") != assistant
            if other or (kinds is not None and p["kind"] not in kinds):
                continue
            sources = [self.graph.nodes[r.end] for r in self.graph.relationships(f, ["DERIVED_FROM"])]
            pages = sorted({s.props["id"] for s in sources if "Page" in s.labels})
            segments = sorted({s.props["id"] for s in sources if "Segment" in s.labels})
            similarity = None if vector is None or p.get("embedding") is None else cosine(p["embedding"], vector)
            rows.append((f, pages, segments, similarity))
        rows.sort(key=lambda r: (-(r[3] or 0.0), r[0].props["kind"], r[0].props["created_at"]))
        return [
            (fact_from_record(f.props, pages, segments), similarity,
             np.array(f.props["embedding"], dtype=np.float32) if with_embedding and f.props.get("embedding") is not None else None)
            for f, pages, segments, similarity in rows[:limit]
        ]

    def _write_facts(self, segment_id: str, facts: Sequence[FactWrite], now: datetime) -> None:
        # As the Neo4j store: every reinforcement, then every creation.
        s = self._by_id("Segment", segment_id)
        for f in facts:
            if f.existing_id is not None:
                self._reinforce(f, s, self._by_id("Page", f.page_id), now)
        created = [f for f in facts if f.existing_id is None]
        if created and self.graph.unique("Persona", tenant=self.tenant) is None:
            self.graph.create_node(["Persona"], {"tenant": self.tenant, "created_at": now})
        for f in created:
            page = self._by_id("Page", f.page_id)
            if s is not None and page is not None:
                self._create_fact(f, s, page, now)

    def _reinforce(self, f: FactWrite, segment: Node | None, page: Node | None, now: datetime) -> None:
        """cypher/persona/reinforce.cypher for one fact."""
        fact = self._by_id("Fact", f.existing_id or "")
        if fact is None or segment is None or page is None:
            return
        self.graph.set(fact, mentions=fact.props.get("mentions", 1) + 1, updated_at=now, confidence=f.confidence)
        for target in (segment, page):
            if not any(r.end == target.key for r in self.graph.relationships(fact, ["DERIVED_FROM"])):
                self.graph.create_rel("DERIVED_FROM", fact, target)

    def _create_fact(self, f: FactWrite, segment: Node, page: Node, now: datetime) -> None:
        """cypher/persona/create.cypher for one fact."""
        persona = self.graph.unique("Persona", tenant=self.tenant)
        assert persona is not None  # made by _write_facts first
        fact = self.graph.create_node(["Fact"], {
            "id": f.id or str(uuid.uuid4()), "tenant": self.tenant, "kind": f.kind, "text": f.text,
            "confidence": f.confidence, "mentions": 1, "uses": 0, "assistant": f.assistant, "analysis": f.analysis,
            "model": f.model, "created_at": now, "updated_at": now,
            "embedding": None if f.embedding is None else np.asarray(f.embedding, dtype=np.float32),
        })
        self.graph.create_rel("HAS_FACT", persona, fact)
        self.graph.create_rel("DERIVED_FROM", fact, segment)
        self.graph.create_rel("DERIVED_FROM", fact, page)
        if f.supersedes is not None:
            if (old := self._by_id("Fact", f.supersedes)) is not None:
                self.graph.set(old, invalid_at=now)
                self.graph.create_rel("SUPERSEDED_BY", old, fact, {"reason": f.reason, "at": now})


