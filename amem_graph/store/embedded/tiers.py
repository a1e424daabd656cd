"""The MemoryOS tiers in the embedded store: pages, dialogue chains, segments and persona facts, each
method doing what its statement in cypher/page/, cypher/segment/ and cypher/persona/ does in Neo4j."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import numpy as np

from ... import validation
from ...models import Fact, Page, Segment
from ..base import FactWrite, LastPage, PageWrite, SegmentState, SegmentWrite
from ..lucene import PAGE_FIELDS, check_fields, query_words
from ..records import fact_from_record, page_from_record, segment_from_record
from .fulltext import FulltextIndex
from .graph import Node, PropertyGraph

T = TypeVar("T")


def _cosine(a: Any, b: Any) -> float:
    """Raw cosine in [-1, 1] (the statements' `2 * vector.similarity.cosine(a, b) - 1`)."""
    a, b = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-12))


def heat(segment: Mapping[str, Any], params: Mapping[str, float], now: datetime) -> float:
    """cypher/fragments/segment_heat.cypher."""
    last = segment.get("last_access")
    age = (now - last).total_seconds() if last is not None and now > last else 0.0
    return (params["alpha"] * segment.get("visits", 0) + params["beta"] * segment.get("interaction_len", 0)
            + params["gamma"] * math.exp(-age / params["mu"]))


class EmbeddedTiers:
    """TierStore over EmbeddedStore's graph, lock and transactions."""

    graph: PropertyGraph
    _page_text: FulltextIndex
    _read: Callable[[Callable[[], Any]], Any]
    _write: Callable[[Callable[[], Any]], Any]
    _lock_tenant: Callable[[str], None]
    _catch_up: Callable[[], None]
    _require_dimension: Callable[[], int]

    # -- helpers ----------------------------------------------------------------------------------

    def _page(self, node: Node, *, segment: bool = True) -> Page:
        """cypher/fragments/page_map.cypher: the page with its chain and (when asked) its segment."""
        chain = self._owner(node, "Chain")
        seg = self._owner(node, "Segment") if segment else None
        props = {**node.props, "chain_id": chain and chain.props["id"], "chain_summary": chain and chain.props.get("summary"),
                 "segment_id": seg and seg.props["id"]}
        return page_from_record(props)

    def _owner(self, page: Node, label: str) -> Node | None:
        for rel in self.graph.relationships(page, ["HAS_PAGE"], "in"):
            owner = self.graph.nodes[rel.start]
            if label in owner.labels:
                return owner
        return None

    def _pages_of(self, tenant: str, session_id: str) -> list[Node]:
        return sorted(self.graph.in_session("Page", tenant, session_id), key=lambda p: p.props["seq"])

    def _by_id(self, label: str, tenant: str, item_id: str) -> Node | None:
        node = self.graph.unique(label, id=item_id)
        return node if node is not None and node.props.get("tenant") == tenant else None

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

    def _vector(self, vector: Any, what: str) -> np.ndarray:
        return np.asarray(validation.vector(vector, self._require_dimension(), what), dtype=np.float32)

    # -- pages ------------------------------------------------------------------------------------

    def last_page(self, tenant: str, session_id: str) -> LastPage | None:
        def work() -> LastPage | None:
            pages = self._pages_of(tenant, session_id)
            if not pages:
                return None
            page = pages[-1]
            before = self._neighbours(page, "in", 1)
            chain = self._owner(page, "Chain")
            window = tuple((p.props.get("user_text") or "", p.props.get("assistant_text") or "") for p in [*before, page])
            return LastPage(self._page(page), np.array(page.props["embedding"], dtype=np.float32),
                            tuple(chain.props.get("keywords") or ()) if chain else (), window)

        return self._read(work)

    def add_page(self, tenant: str, page: PageWrite, *, now: datetime) -> int:
        embedding = self._vector(page.embedding, "page embedding")

        def work() -> int:
            self._lock_tenant(tenant)
            pages = self._pages_of(tenant, page.session_id)
            last = pages[-1] if pages else None
            node = self.graph.create_node(["Page"], {
                "id": page.id, "tenant": tenant, "session_id": page.session_id,
                "seq": (last.props["seq"] if last else 0) + 1, "user_text": page.user_text,
                "assistant_text": page.assistant_text, "at": page.at, "created_at": now, "keywords": list(page.keywords),
                "tier": "stm", "analysis": page.analysis, "model": page.model, "neighbourhood": page.neighbourhood,
                "embedding": embedding,
            })
            if last is not None:
                self.graph.create_rel("NEXT", last, node)
            chain = self.graph.unique("Chain", id=page.chain_id)
            if chain is None:
                chain = self.graph.create_node(["Chain"], {"id": page.chain_id, "tenant": tenant,
                                                           "session_id": page.session_id, "created_at": now, "pages": 0})
            self.graph.set(chain, summary=page.chain_summary, keywords=list(page.chain_keywords), updated_at=now,
                           pages=chain.props.get("pages", 0) + 1)
            self.graph.create_rel("HAS_PAGE", chain, node)
            for before in self._neighbours(node, "in"):
                current = before.props.get("neighbourhood")
                self.graph.set(before, neighbourhood=(current + "\n" if current is not None else "") + page.turn)
            return int(node.props["seq"])

        return self._write(work)

    def stm_pages(self, tenant: str, session_id: str) -> list[Page]:
        return self._read(lambda: [self._page(p, segment=False) for p in self._pages_of(tenant, session_id)
                                   if p.props.get("tier") == "stm"])

    def overflow(self, tenant: str, session_id: str, capacity: int) -> list[tuple[Page, np.ndarray]]:
        def work() -> list[tuple[Page, np.ndarray]]:
            stm = [p for p in self._pages_of(tenant, session_id) if p.props.get("tier") == "stm"]
            older = stm[: max(0, len(stm) - capacity)]
            return [(self._page(p, segment=False), np.array(p.props["embedding"], dtype=np.float32)) for p in older]

        return self._read(work)

    def pages(self, tenant: str, *, limit: int, offset: int = 0) -> list[Page]:
        def work() -> list[Page]:
            ordered = sorted(self.graph.labelled("Page", tenant), key=lambda p: (p.props["session_id"], p.props["seq"]))
            return [self._page(p) for p in ordered[offset: offset + limit]]

        return self._read(work)

    def page_search(self, tenant: str, query: str, k: int, *, fields: Mapping[str, float] | None = None) -> list[tuple[Page, float]]:
        check_fields(fields, PAGE_FIELDS)
        words = query_words(query)

        def work() -> list[tuple[Page, float]]:
            self._catch_up()
            scores = self._page_text.scores(words, fields)
            found = [(key, s) for key, s in scores.items() if self.graph.nodes[key].props.get("tenant") == tenant]
            found.sort(key=lambda pair: (-pair[1], pair[0]))
            return [(self._page(self.graph.nodes[key]), float(s)) for key, s in found[:k]]

        return self._read(work) if words else []

    def page_vector_search(self, tenant: str, vector: np.ndarray, k: int) -> list[tuple[Page, float]]:
        query = self._vector(vector, "query vector")

        def work() -> list[tuple[Page, float]]:
            scored = [(p, _cosine(p.props["embedding"], query)) for p in self.graph.labelled("Page", tenant)
                      if p.props.get("embedding") is not None]
            scored.sort(key=lambda pair: (-pair[1], pair[0].key))
            return [(self._page(p), s) for p, s in scored[:k]]

        return self._read(work)

    def page_windows(self, tenant: str, page_ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        def work() -> dict[str, list[tuple[str, str]]]:
            windows = {}
            for page_id in page_ids:
                page = self._by_id("Page", tenant, page_id)
                if page is not None:
                    around = [*reversed(self._neighbours(page, "in")), page, *self._neighbours(page, "out")]
                    windows[page_id] = [(p.props.get("user_text") or "", p.props.get("assistant_text") or "") for p in around]
            return windows

        return self._read(work) if page_ids else {}

    def session_page_counts(self, tenant: str) -> dict[str, int]:
        def work() -> dict[str, int]:
            counts: dict[str, int] = {}
            for page in self.graph.labelled("Page", tenant):
                counts[page.props["session_id"]] = counts.get(page.props["session_id"], 0) + 1
            return counts

        return self._read(work)

    def latest_session(self, tenant: str) -> str | None:
        def work() -> str | None:
            pages = [p for p in self.graph.labelled("Page", tenant) if p.props.get("created_at") is not None]
            latest = max(pages, key=lambda p: (p.props["created_at"], p.props["seq"], p.props["id"]), default=None)
            return latest.props["session_id"] if latest else None

        return self._read(work)

    def sessions_with_stm(self, tenant: str) -> list[str]:
        return self._read(lambda: sorted({p.props["session_id"] for p in self.graph.labelled("Page", tenant)
                                          if p.props.get("tier") == "stm"}))

    # -- segments ---------------------------------------------------------------------------------

    def segments(
        self, tenant: str, *, heat: Mapping[str, float], now: datetime, vector: np.ndarray | None = None,
        limit: int = 1_000, include_archived: bool = False,
    ) -> list[tuple[Segment, float | None]]:
        query = None if vector is None else self._vector(vector, "query vector")

        def work() -> list[tuple[Segment, float | None]]:
            rows = []
            for s in self.graph.labelled("Segment", tenant):
                if not include_archived and s.props.get("archived_at") is not None:
                    continue
                cosine = None if query is None else _cosine(s.props["embedding"], query)
                rows.append((s, _heat(s, heat, now), cosine))
            rows.sort(key=lambda r: -(r[2] if r[2] is not None else r[1]))
            return [(segment_from_record(s.props, h), c) for s, h, c in rows[:limit]]

        return self._read(work)

    def segment_state(self, tenant: str, segment_id: str) -> SegmentState | None:
        def work() -> SegmentState | None:
            s = self._by_id("Segment", tenant, segment_id)
            if s is None or s.props.get("archived_at") is not None:
                return None
            return SegmentState(np.array(s.props["embedding"], dtype=np.float32), tuple(s.props.get("keywords") or ()),
                                tuple(int(c) for c in s.props.get("keyword_counts") or ()), s.props.get("summary") or "",
                                int(s.props.get("pages", 0)))

        return self._read(work)

    def join_segment(self, tenant: str, page_id: str, segment: SegmentWrite, *, now: datetime) -> str:
        embedding = self._vector(segment.embedding, "segment embedding")

        def work() -> str:
            self._lock_tenant(tenant)
            page = self._by_id("Page", tenant, page_id)
            if page is None or page.props.get("tier") != "stm":
                return "moved"
            old = self._by_id("Segment", tenant, segment.id)
            current = (segment.expected_pages is None and old is None) or (
                old is not None and old.props.get("pages") == segment.expected_pages and old.props.get("archived_at") is None
            )
            if not current:
                return "conflict"
            s = old or self.graph.create_node(["Segment"], {"id": segment.id, "tenant": tenant, "created_at": now,
                                                             "pages": 0, "visits": 0, "interaction_len": 0, "promotions": 0})
            self.graph.set(s, summary=segment.summary, keywords=list(segment.keywords),
                           keyword_counts=list(segment.keyword_counts), analysis=segment.analysis, model=segment.model,
                           pages=s.props["pages"] + 1, interaction_len=s.props["interaction_len"] + 1, last_access=now,
                           updated_at=now, embedding=embedding)
            self.graph.set(page, tier="mtm", joined_at=now)
            self.graph.create_rel("HAS_PAGE", s, page)
            return "joined"

        return self._write(work)

    def archive_coldest(self, tenant: str, capacity: int, *, heat: Mapping[str, float], now: datetime) -> list[str]:
        def work() -> list[str]:
            active = [s for s in self.graph.labelled("Segment", tenant) if s.props.get("archived_at") is None]
            active.sort(key=lambda s: (s.props["created_at"]), reverse=True)
            active.sort(key=lambda s: (s.props.get("last_access") or s.props["created_at"]), reverse=True)
            active.sort(key=lambda s: _heat(s, heat, now), reverse=True)
            archived = active[capacity:]
            for s in archived:
                self.graph.set(s, archived_at=now)
            return [s.props["id"] for s in archived]

        return self._write(work)

    def segment_pages(self, tenant: str, segment_id: str, *, unpromoted: bool = False) -> list[Page]:
        def work() -> list[Page]:
            s = self._by_id("Segment", tenant, segment_id)
            pages = [self.graph.nodes[r.end] for r in self.graph.relationships(s, ["HAS_PAGE"])] if s else []
            pages = [p for p in pages if not unpromoted or p.props.get("promoted_at") is None]
            pages.sort(key=lambda p: (p.props["session_id"], p.props["seq"]))
            return [self._page(p) for p in pages]

        return self._read(work)

    def best_pages(self, tenant: str, segment_ids: Sequence[str], vector: np.ndarray, k: int) -> list[tuple[str, Page, float]]:
        query = self._vector(vector, "query vector")

        def work() -> list[tuple[str, Page, float]]:
            rows = []
            for segment_id in segment_ids:
                s = self._by_id("Segment", tenant, segment_id)
                if s is None:
                    continue
                scored = [(self.graph.nodes[r.end], _cosine(self.graph.nodes[r.end].props["embedding"], query))
                          for r in self.graph.relationships(s, ["HAS_PAGE"])]
                scored.sort(key=lambda pair: -pair[1])
                rows += [(segment_id, self._page(p), c) for p, c in scored[:k]]
            rows.sort(key=lambda row: (row[0], -row[2]))
            return rows

        return self._read(work) if segment_ids else []

    def visit_segments(self, tenant: str, segment_ids: Sequence[str], *, now: datetime) -> None:
        def work() -> None:
            for segment_id in segment_ids:
                if (s := self._by_id("Segment", tenant, segment_id)) is not None:
                    self.graph.set(s, visits=s.props.get("visits", 0) + 1, last_access=now)

        if segment_ids:
            self._write(work)

    def claim_segment(self, tenant: str, segment: Segment, *, now: datetime) -> bool:
        def work() -> bool:
            self._lock_tenant(tenant)
            s = self._by_id("Segment", tenant, segment.id)
            if s is None or s.props.get("promotions") != segment.promotions or s.props.get("archived_at") is not None:
                return False
            self.graph.set(s, promotions=s.props["promotions"] + 1, promoted_at=now,
                           visits=max(0, s.props["visits"] - segment.visits),
                           interaction_len=max(0, s.props["interaction_len"] - segment.interaction_len))
            return True

        return self._write(work)

    def mark_promoted(self, tenant: str, segment_id: str, derived: Sequence[tuple[str, str]], *, now: datetime) -> None:
        def work() -> None:
            s = self._by_id("Segment", tenant, segment_id)
            if s is None:
                return
            for page_id, note_id in derived:
                page, note = self._by_id("Page", tenant, page_id), self._by_id("Note", tenant, note_id)
                if page is None or note is None:
                    continue
                for target in (page, s):
                    if not any(r.end == target.key for r in self.graph.relationships(note, ["DERIVED_FROM"])):
                        self.graph.create_rel("DERIVED_FROM", note, target)
                self.graph.set(page, promoted_at=now)

        self._write(work)

    # -- persona ----------------------------------------------------------------------------------

    def facts(
        self, tenant: str, assistant: str, *, kinds: Sequence[str] | None = None, vector: np.ndarray | None = None,
        limit: int = 10_000, with_embedding: bool = False,
    ) -> list[tuple[Fact, float | None, np.ndarray | None]]:
        query = None if vector is None else self._vector(vector, "query vector")

        def work() -> list[tuple[Fact, float | None, np.ndarray | None]]:
            rows = []
            for f in self.graph.labelled("Fact", tenant):
                p = f.props
                if p.get("archived_at") is not None or p.get("invalid_at") is not None:
                    continue
                if (p["kind"] == "assistant_knowledge" and p.get("assistant") != assistant) or (kinds is not None and p["kind"] not in kinds):
                    continue
                sources = [self.graph.nodes[r.end] for r in self.graph.relationships(f, ["DERIVED_FROM"])]
                pages = sorted({s.props["id"] for s in sources if "Page" in s.labels})
                segments = sorted({s.props["id"] for s in sources if "Segment" in s.labels})
                cosine = None if query is None or p.get("embedding") is None else _cosine(p["embedding"], query)
                rows.append((f, pages, segments, cosine))
            rows.sort(key=lambda r: (-(r[3] or 0.0), r[0].props["kind"], r[0].props["created_at"]))
            return [
                (fact_from_record(f.props, pages, segments), cosine,
                 np.array(f.props["embedding"], dtype=np.float32) if with_embedding and f.props.get("embedding") is not None else None)
                for f, pages, segments, cosine in rows[:limit]
            ]

        return self._read(work)

    def write_facts(self, tenant: str, segment_id: str, facts: Sequence[FactWrite], *, capacity: int, now: datetime) -> list[str]:
        dimension = self._require_dimension()
        vectors = {id(f): None if f.embedding is None else np.asarray(validation.vector(f.embedding, dimension, "fact embedding"), dtype=np.float32)
                   for f in facts}

        def work() -> list[str]:
            # As the Neo4j store: every reinforcement, then every creation, then archiving.
            s = self._by_id("Segment", tenant, segment_id)
            for f in facts:
                if f.existing_id is not None:
                    self._reinforce(tenant, f, s, self._by_id("Page", tenant, f.page_id), now)
            created = [f for f in facts if f.existing_id is None]
            if created and self.graph.unique("Persona", tenant=tenant) is None:
                self.graph.create_node(["Persona"], {"tenant": tenant, "created_at": now})
            for f in created:
                page = self._by_id("Page", tenant, f.page_id)
                if s is not None and page is not None:
                    self._create_fact(tenant, f, vectors[id(f)], s, page, now)
            return self._archive_facts(tenant, capacity, now)

        return self._write(work)

    def _reinforce(self, tenant: str, f: FactWrite, segment: Node | None, page: Node | None, now: datetime) -> None:
        fact = self._by_id("Fact", tenant, f.existing_id or "")
        if fact is None or fact.props.get("invalid_at") is not None or fact.props.get("archived_at") is not None:
            return
        if segment is None or page is None:
            return
        self.graph.set(fact, mentions=fact.props.get("mentions", 1) + 1, updated_at=now,
                       confidence=max(f.confidence, fact.props.get("confidence", 0.0)))
        for target in (segment, page):
            if not any(r.end == target.key for r in self.graph.relationships(fact, ["DERIVED_FROM"])):
                self.graph.create_rel("DERIVED_FROM", fact, target)

    def _create_fact(self, tenant: str, f: FactWrite, vector: np.ndarray | None, segment: Node, page: Node, now: datetime) -> None:
        persona = self.graph.unique("Persona", tenant=tenant)
        assert persona is not None  # made by write_facts first
        fact = self.graph.create_node(["Fact"], {
            "id": f.id or str(uuid.uuid4()), "tenant": tenant, "kind": f.kind, "text": f.text, "confidence": f.confidence,
            "mentions": 1, "uses": 0, "assistant": f.assistant, "analysis": f.analysis, "model": f.model,
            "created_at": now, "updated_at": now, "embedding": vector,
        })
        self.graph.create_rel("HAS_FACT", persona, fact)
        self.graph.create_rel("DERIVED_FROM", fact, segment)
        self.graph.create_rel("DERIVED_FROM", fact, page)
        if f.supersedes is not None:
            old = self._by_id("Fact", tenant, f.supersedes)
            if old is not None and old.props.get("invalid_at") is None and old.props.get("archived_at") is None:
                self.graph.set(old, invalid_at=now)
                self.graph.create_rel("SUPERSEDED_BY", old, fact, {"reason": f.reason, "at": now})

    def _archive_facts(self, tenant: str, capacity: int, now: datetime) -> list[str]:
        """cypher/persona/archive.cypher: past `capacity` per kind (and assistant), the least used go."""
        groups: dict[tuple[str, str | None], list[Node]] = {}
        for f in self.graph.labelled("Fact", tenant):
            if f.props.get("archived_at") is None and f.props.get("invalid_at") is None:
                who = f.props.get("assistant") if f.props["kind"] == "assistant_knowledge" else None
                groups.setdefault((f.props["kind"], who), []).append(f)
        archived = []
        for ranked in groups.values():
            ranked.sort(key=lambda f: f.props["updated_at"], reverse=True)
            ranked.sort(key=lambda f: f.props.get("uses", 0) + f.props.get("mentions", 1), reverse=True)
            for f in ranked[capacity:]:
                self.graph.set(f, archived_at=now)
                archived.append(f.props["id"])
        return archived

    def use_facts(self, tenant: str, fact_ids: Sequence[str], *, now: datetime) -> None:
        def work() -> None:
            for fact_id in fact_ids:
                if (f := self._by_id("Fact", tenant, fact_id)) is not None:
                    self.graph.set(f, uses=f.props.get("uses", 0) + 1, last_used=now)

        if fact_ids:
            self._write(work)


def _heat(segment: Node, params: Mapping[str, float], now: datetime) -> float:
    return heat(segment.props, params, now)
