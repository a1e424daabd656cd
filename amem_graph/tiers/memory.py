"""MemoryOS (Kang et al., EMNLP 2025) on the note graph: short-term pages, mid-term segments scored by heat,
long-term persona facts and agentic notes, each step a transaction of its own so that a failure at any
point leaves every turn stored and the next turn finishes what was left."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np

from ..core import timeline, validation
from ..core.log import event
from ..core.text import without_stamp
from ..embedding import Embedder, cosine
from ..errors import AmemError, InvalidInput, LLMError, LLMNotConfigured
from ..llm.client import LLMClient
from ..llm.prompts import RESPOND_SCHEMA, respond_messages
from ..models import FACT_KINDS, MAX_HOPS, NO_FILTER, Fact, NoteInput, Page, SearchFilter, Segment
from ..read.retrieval import Retriever, comparable, without_names, without_stop_words
from ..settings import TierSettings
from ..store.base import FactWrite, MemoryStore, PageWrite, SegmentWrite, SessionPages, Tx
from ..write.evolution import NEIGHBOURHOOD_TURNS, Evolver
from . import persona
from .analysis import (
    HeuristicTierAnalyser,
    TierAnalyser,
    bare,
    embedded_text,
    jaccard,
    keywords,
    merged_keywords,
)
from .context import PAGE_SOURCE, FactHit, PageHit, SegmentHit, TierContext
from .heat import coldest_past, heated, hottest

SEGMENT_CANDIDATES = 20  # segments a leaving page (or a query) is compared with, by cosine, before Jaccard
JOIN_ATTEMPTS = 3
MAX_SESSION_CHARS = 200
MAX_RESPONSE_TOKENS = 800
# BM25 over pages weighs the turns around a page above the page alone, as note search does (the answer to a
# question is often worded in the turn before or after the one that holds it).
PAGE_FIELDS = {"user_text": 0.5, "assistant_text": 0.5, "neighbourhood": 1.0}


@dataclass(frozen=True)
class Promotion:
    """What promoting one hot segment wrote."""

    segment_id: str
    heat: float
    note_ids: tuple[str, ...]
    facts_added: tuple[str, ...]
    facts_reinforced: tuple[str, ...]
    facts_superseded: tuple[str, ...]
    facts_archived: tuple[str, ...]


class MemoryTiers:
    """The hierarchy for every tenant of one AgenticMemory (reach it as `memory.tiers`).

    `clock` gives "now" for heat, access times and page times (tests move it to age segments)."""

    def __init__(
        self, store: MemoryStore, embedder: Embedder, evolver: Evolver, analyser: TierAnalyser, settings: TierSettings, *,
        retriever: Retriever, tenant: str, llm: LLMClient | None, max_chars: int, clock: Callable[[], datetime] = validation.now,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.evolver = evolver
        self.analyser = analyser
        self.settings = settings
        self.clock = clock
        self._retriever = retriever
        self._default_tenant = tenant
        self._llm = llm
        self._max_chars = max_chars
        self._threads = ThreadPoolExecutor(max_workers=4, thread_name_prefix="amem-tiers")
        self._offline = HeuristicTierAnalyser(settings.continuity)
        # Turns added in the background settle here, one at a time and in order; a session asked for twice before
        # its settle starts settles once. Their pages are the queue: what a kill leaves short-term past the
        # capacity, the session's next turn (or `flush`) moves.
        self._settler = ThreadPoolExecutor(max_workers=1, thread_name_prefix="amem-tiers-settle")
        self._settling: dict[tuple[str, str], Future[None]] = {}
        self._settling_lock = threading.Lock()

    # -- short-term memory -----------------------------------------------------------------------

    def add_turn(
        self, user_text: str, assistant_text: str = "", *, tenant: str | None = None, session_id: str = "default",
        at: datetime | str | None = None, background: bool = False,
    ) -> Page:
        """Store one dialogue turn as a page of the session's short-term memory (either side may be empty,
        not both). Pages past the STM capacity move to mid-term segments, and hot segments are promoted.

        With `background`, the turn's chain is decided offline and the rest (segment summaries, promotion,
        persona) runs after the call returns, in order (`settling` counts what waits; `memory.wait()` waits)."""
        tenant = self._tenant(tenant)
        user_text = validation.text(user_text, "user_text", self._max_chars, allow_empty=True)
        assistant_text = validation.text(assistant_text, "assistant_text", self._max_chars, allow_empty=True)
        if not (user_text.strip() or assistant_text.strip()):
            raise InvalidInput("a turn needs text on at least one side (user_text or assistant_text)")
        session_id = self._session(session_id)
        now = validation.to_millis(self.clock())
        when = validation.event_time(at) or now
        page = Page(id=str(uuid.uuid4()), tenant=tenant, session_id=session_id, seq=0, user_text=user_text,
                    assistant_text=assistant_text, at=when)
        vector = self.embedder.embed_one(embedded_text(user_text, assistant_text))
        window = self.store.read(tenant, lambda tx: tx.pages(session=session_id, limit=2, with_embedding=True))
        previous = window[-1] if window else None
        similarity = (self.embedder.similarity(cosine(vector, previous.embedding))
                      if previous and previous.embedding is not None else None)
        # The chain is needed before the next turn arrives, so a turn in the background is chained by the offline rule.
        analyser: TierAnalyser = self._offline if background else self.analyser
        turn = analyser.turn(page, previous, similarity, previous.chain_keywords if previous else ())
        chain_id = previous.chain_id if turn.continues and previous and previous.chain_id else str(uuid.uuid4())
        write = PageWrite(
            id=page.id, session_id=session_id, user_text=user_text, assistant_text=assistant_text, at=when,
            keywords=turn.keywords, embedding=self._vector(vector), chain_id=chain_id, chain_summary=turn.chain_summary,
            chain_keywords=turn.chain_keywords, analysis=turn.analysis, model=turn.model, turn=_neighbourhood([page]),
            neighbourhood=_neighbourhood([*window, page]),
        )
        seq = self.store.write(tenant, lambda tx: tx.add_page(write, now))
        if background:
            self._settle_later(tenant, session_id)
        else:
            self._settle_now(tenant, session_id)
        return Page(id=page.id, tenant=tenant, session_id=session_id, seq=seq, user_text=user_text,
                    assistant_text=assistant_text, at=when, keywords=turn.keywords, chain_id=chain_id,
                    chain_summary=turn.chain_summary, analysis=turn.analysis,  # type: ignore[arg-type]
                    chain_keywords=turn.chain_keywords, created_at=now)

    def _settle_now(self, tenant: str, session_id: str) -> None:
        try:
            self._settle(tenant, session_id, self.settings.stm_capacity)
        except AmemError as err:  # the turn is stored: the next turn (or flush) moves and promotes what is left
            event("tiers_settle_deferred", tenant=tenant, session_id=session_id, error=str(err))

    def _settle_later(self, tenant: str, session_id: str) -> None:
        key = (tenant, session_id)
        with self._settling_lock:
            queued = self._settling.get(key)
            if queued is not None and not queued.running() and not queued.done():
                return  # queued and not started: it will see this page too
            try:
                self._settling[key] = self._settler.submit(self._settle_queued, tenant, session_id)
            except RuntimeError:  # closing: the session's next turn (or flush) settles it
                pass

    def _settle_queued(self, tenant: str, session_id: str) -> None:
        try:
            self._settle_now(tenant, session_id)
        except Exception as err:  # noqa: BLE001 - the pages stay short-term; the session's next turn retries
            event("tiers_settle_failed", tenant=tenant, session_id=session_id, error=f"{type(err).__name__}: {err}")
        finally:
            with self._settling_lock:
                done = [key for key, future in self._settling.items() if future.done()]
                for key in done:
                    self._settling.pop(key, None)

    def settling(self) -> int:
        """How many sessions have turns added in the background that have not settled yet (in this process)."""
        with self._settling_lock:
            return sum(1 for future in self._settling.values() if not future.done())

    def flush(self, *, tenant: str | None = None, session_id: str | None = None) -> list[str]:
        """End a session (or every session): its short-term pages move to mid-term segments now, as they
        would when later turns pushed them out. Returns the ids of the pages moved."""
        tenant = self._tenant(tenant)
        sessions = [self._session(session_id)] if session_id is not None else sorted(
            s.session_id for s in self._sessions(tenant) if s.stm
        )
        return [page_id for session in sessions for page_id in self._settle(tenant, session, 0)]

    def stm(self, *, tenant: str | None = None, session_id: str | None = None) -> list[Page]:
        """The short-term pages of a session (by default the tenant's most recent one), oldest first."""
        tenant = self._tenant(tenant)
        session = self._session(session_id) if session_id is not None else self._latest_session(tenant)
        return self._stm(tenant, session) if session else []

    def pages(self, *, tenant: str | None = None, limit: int = 1_000, offset: int = 0) -> list[Page]:
        """The tenant's pages in dialogue order (by session, then seq), whichever tier they are in."""
        limit, offset = validation.window(limit, offset)
        return self.store.read(self._tenant(tenant), lambda tx: tx.pages(limit=limit, offset=offset))

    def _settle(self, tenant: str, session_id: str, capacity: int) -> list[str]:
        """Move the session's pages beyond `capacity` into segments, oldest first; then archive past the
        segment capacity and promote every hot segment."""
        stm = self.store.read(tenant, lambda tx: tx.pages(session=session_id, stm=True, with_embedding=True))
        older = stm[: max(0, len(stm) - capacity)]
        moved = [page.id for page in older if page.embedding is not None and self._join(tenant, page)]
        if moved:
            if archived := self.store.write(tenant, self._archive_coldest):
                event("segments_archived", tenant=tenant, segments=archived)
            self.promote(tenant=tenant)
        return moved

    def _archive_coldest(self, tx: Tx) -> list[str]:
        """Past the segment capacity, the coldest active segments are archived: kept with their pages, out of
        the active set."""
        now = self.clock()
        segments = [s for s, _ in heated(tx.segments(), self.settings.heat_params(), now)]
        archived = [s.id for s in coldest_past(segments, self.settings.segment_capacity)]
        tx.update("Segment", [(segment_id, {"archived_at": now}) for segment_id in archived])
        return archived

    def _sessions(self, tenant: str, as_of: datetime | None = None) -> list[SessionPages]:
        return self.store.read(tenant, lambda tx: tx.sessions(as_of))

    def _latest_session(self, tenant: str, as_of: datetime | None = None) -> str | None:
        """The session of the tenant's newest page (recorded by `as_of`)."""
        dated = [s for s in self._sessions(tenant, as_of) if s.latest is not None]
        return max(dated, key=lambda s: (s.latest, s.session_id)).session_id if dated else None

    def _stm(self, tenant: str, session_id: str, as_of: datetime | None = None) -> list[Page]:
        return self.store.read(tenant, lambda tx: tx.pages(session=session_id, stm=True, as_of=as_of))

    def session_page_counts(self, *, tenant: str | None = None) -> dict[str, int]:
        """How many pages each session of the tenant holds (where a resumed ingest of turns picks up)."""
        return {s.session_id: s.pages for s in self._sessions(self._tenant(tenant))}

    # -- mid-term memory -------------------------------------------------------------------------

    def _join(self, tenant: str, page: Page) -> bool:
        """The page joins the segment with the best F_score (cosine + keyword Jaccard) if it reaches the
        threshold, else starts a segment. Read, decide, write with a version check; again if it moved."""
        vector = np.asarray(page.embedding, dtype=np.float32)
        for _ in range(JOIN_ATTEMPTS):
            now = self.clock()
            best, score = self._best_segment(tenant, vector, page.keywords, now)
            state = None
            if best and score >= self.settings.merge_threshold:
                state = self.store.read(tenant, lambda tx, segment_id=best.id: _segment(tx, segment_id))
            if state is None or state.archived_at is not None:
                summary = self.analyser.segment(None, page.keywords, page, 1)
                words, counts = merged_keywords((), (), (*page.keywords, *summary.keywords))
                write = SegmentWrite(str(uuid.uuid4()), summary.summary, words, counts, self._vector(vector), None,
                                     summary.analysis, summary.model)
            else:
                words, counts = merged_keywords(state.keywords, state.keyword_counts, page.keywords)
                summary = self.analyser.segment(state.summary, words, page, state.pages + 1)
                words, counts = merged_keywords(words, counts, summary.keywords) if summary.keywords else (words, counts)
                centroid = (np.asarray(state.embedding, dtype=np.float32) * state.pages + vector) / (state.pages + 1)
                write = SegmentWrite(state.id, summary.summary, words, counts, self._vector(centroid), state.pages,
                                     summary.analysis, summary.model)
            outcome = self.store.write(tenant, partial(self._join_if_current, page=page, segment=write, now=now))
            if outcome != "conflict":
                return outcome == "joined"
        event("page_not_joined", tenant=tenant, page_id=page.id, reason="segments kept changing; the next turn retries")
        return False

    def _best_segment(
        self, tenant: str, vector: np.ndarray, words: Sequence[str], now: datetime, limit: int = SEGMENT_CANDIDATES
    ) -> tuple[Segment | None, float]:
        ranked = self._scored_segments(tenant, vector, words, now, limit)
        return ranked[0] if ranked else (None, float("-inf"))

    def _scored_segments(
        self, tenant: str, vector: np.ndarray | None, words: Sequence[str], now: datetime, limit: int,
        as_of: datetime | None = None,
    ) -> list[tuple[Segment, float]]:
        query = None if vector is None else self._vector(vector)
        rows = heated(self.store.read(tenant, lambda tx: tx.segments(vector=query, limit=limit, as_of=as_of)),
                      self.settings.heat_params(), now)
        similarity = self.embedder.similarity
        scored = [(segment, (0.0 if cosine is None else similarity(float(cosine))) + jaccard(segment.keywords, words))
                  for segment, cosine in rows]
        return sorted(scored, key=lambda item: -item[1])

    def segments(self, *, tenant: str | None = None, include_archived: bool = False, limit: int = 1_000) -> list[Segment]:
        """Segments with their heat now, hottest first."""
        return self._hottest(self._tenant(tenant), include_archived=include_archived)[:limit]

    def segment_pages(self, segment_id: str, *, tenant: str | None = None) -> list[Page]:
        segment_id = validation.note_id(segment_id)
        return self.store.read(self._tenant(tenant), lambda tx: tx.pages(segment=segment_id))

    # -- long-term memory ------------------------------------------------------------------------

    def promote(self, *, tenant: str | None = None) -> list[Promotion]:
        """Promote every segment whose heat has reached the threshold (not only the hottest): its new pages
        become agentic notes (analysed, linked, evolving their neighbours) and persona facts, each pointing
        at its page and segment (DERIVED_FROM); then the segment's counters start again."""
        tenant = self._tenant(tenant)
        promotions = [self._promote(tenant, s) for s in self._hottest(tenant) if s.heat >= self.settings.promote_heat]
        return [p for p in promotions if p is not None]

    def _promote(self, tenant: str, segment: Segment) -> Promotion | None:
        """Claimed first, so two writers never promote one segment twice; if the work stops half-way, the
        pages it did not mark go with the segment's next promotion."""
        if not self.store.write(tenant, partial(self._claim, segment=segment, now=self.clock())):
            return None
        pages = self.store.read(tenant, lambda tx: tx.pages(segment=segment.id, unpromoted=True))
        ids = [page.id for page in pages]
        around = self.store.read(tenant, lambda tx: tx.pages(around=ids, width=NEIGHBOURHOOD_TURNS)) if ids else []
        derived = [
            (page.id, self.evolver.add(tenant, self._note(page), neighbourhood=_neighbourhood(_window(page, around))).note_id)
            for page in pages
        ]
        facts = self.analyser.persona(pages) if pages else None
        writes = []
        if facts and facts.facts:
            vectors = self.embedder.embed([fact.text for fact in facts.facts])
            held = self.store.read(tenant, lambda tx: tx.facts(self.settings.assistant, with_embedding=True))
            existing = [(f, v) for f, _, v in held if v is not None]
            writes = persona.decide(facts.facts, vectors, existing, assistant=self.settings.assistant,
                                    analysis=facts.analysis, model=facts.model, similarity=self.embedder.similarity)
        now = self.clock()
        writes, archived = self.store.write(tenant, partial(self._write_facts, segment_id=segment.id, writes=writes, now=now)) if writes else ([], [])
        self.store.write(tenant, lambda tx: tx.write_segment(segment.id, now, derived=derived))
        return Promotion(
            segment.id, segment.heat, tuple(note_id for _, note_id in derived),
            facts_added=tuple(w.text for w in writes if w.existing_id is None),
            facts_reinforced=tuple(w.existing_id for w in writes if w.existing_id),  # type: ignore[misc]
            facts_superseded=tuple(w.supersedes for w in writes if w.supersedes),  # type: ignore[misc]
            facts_archived=tuple(archived),
        )

    def _note(self, page: Page) -> NoteInput:
        """A page as a note: no session, because notes are promoted topic by topic, not in dialogue order
        (the page keeps the order, and the note points at it)."""
        return validation.note_input(
            NoteInput(content=page.text, source=f"{PAGE_SOURCE}{page.id}", event_time=page.at), 2 * self._max_chars + 32
        )

    def persona(self, *, tenant: str | None = None, kinds: Sequence[str] | None = None) -> list[Fact]:
        """The tenant's active persona facts (of `kinds`, or all), by kind then age."""
        if kinds is not None and (unknown := set(kinds) - set(FACT_KINDS)):
            raise InvalidInput(f"unknown fact kinds {sorted(unknown)}: the kinds are {', '.join(FACT_KINDS)}")
        return [f for f, _, _ in self.store.read(self._tenant(tenant), lambda tx: tx.facts(self.settings.assistant, kinds=kinds))]

    # -- retrieval -------------------------------------------------------------------------------

    def context_for(
        self, query: str, *, tenant: str | None = None, session_id: str | None = None, segments: int = 5,
        pages: int = 3, facts: int = 10, notes: int = 5, hops: int = 2, matches: int = 5,
        as_of: datetime | str | None = None,
    ) -> TierContext:
        """Everything the tiers know about `query`: the session's short-term pages (by default the tenant's
        most recent session), the `segments` best segments (F_score) with their `pages` best pages, the
        `matches` pages that match best by their words (BM25 over a page and its neighbourhood) and the
        `matches` closest in meaning (cosine), in any segment, the `facts` closest persona facts and the
        `notes` best notes (search with graph expansion). The segments and facts used count as visits and
        uses. `ranked_pages()` of the result fuses them all.

        `as_of` answers from the tiers as they stood then: the pages recorded by then, short-term or in the
        segment they had joined by then, the segments and persona facts active then, the notes as `search`
        gives them as of then; a segment's summary, keywords, centroid and heat, and a page's neighbourhood
        and chain summary, are today's. It counts no visit or use."""
        tenant = self._tenant(tenant)
        query = validation.text(query, "query", validation.MAX_QUERY_CHARS)
        at = validation.event_time(as_of, "as_of")
        limits = (("segments", segments, 100), ("pages", pages, 100), ("facts", facts, 1_000),
                  ("matches", matches, 1_000), ("notes", notes, 1_000), ("hops", hops, MAX_HOPS))
        for name, value, top in limits:
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
                raise InvalidInput(f"{name} must be an integer from 0 to {top}, got {value!r}")
        session = self._session(session_id) if session_id is not None else None  # all checked before any read
        # The tiers are read side by side: the note search and BM25 need no query vector, the rest one.
        run = self._threads.submit
        then = NO_FILTER if at is None else SearchFilter(as_of=at)
        notes_found = run(self._retriever.search, tenant, query, k=notes, hops=hops, filters=then) if notes else None
        words = without_stop_words(query)
        matched = run(self.store.read, tenant, lambda tx: tx.page_search(matches, text=words, fields=PAGE_FIELDS, as_of=at)) if matches else None
        session = session or self._latest_session(tenant, at)
        stm = run(self._stm, tenant, session, at) if session else None
        now = self.clock()
        names, called = self._retriever.speakers(tenant).named(query)
        vector = self.embedder.embed_query(without_names(bare(query), called))  # ask about the thing, not the person
        if not self.store.read(tenant, lambda tx: comparable(tx, self.store)):
            vector = None  # pages and facts by their words, segments by keywords and heat
        query_vector = None if vector is None else self._vector(vector)
        similar = run(self.store.read, tenant, lambda tx: tx.page_search(matches, vector=query_vector, as_of=at)) if matches and query_vector else None
        found = run(self.store.read, tenant, lambda tx: tx.facts(self.settings.assistant, vector=query_vector, limit=facts, as_of=at)) if facts else None
        top = self._scored_segments(tenant, vector, keywords(query), now, SEGMENT_CANDIDATES, at)[:segments] if segments else []
        best: dict[str, list[PageHit]] = {}
        chosen = [s.id for s, _ in top]
        best_pages = self.store.read(tenant, lambda tx: tx.page_search(pages, vector=query_vector, segments=chosen, as_of=at)) if pages and chosen and query_vector else []
        for page, similarity in best_pages:
            best.setdefault(page.segment_id or "", []).append(PageHit(_then(page, at), similarity))
        facts_found = found.result() if found else []
        if at is None:  # reading the past is no visit
            self._count_use(tenant, chosen, [f.id for f, _, _ in facts_found], now)
        return TierContext(
            query=query, session_id=session, stm=tuple(_then(page, at) for page in (stm.result() if stm else ())),
            segments=tuple(SegmentHit(s, score, tuple(best.get(s.id, ()))) for s, score in top),
            facts=tuple(FactHit(f, float(cosine or 0.0)) for f, cosine, _ in facts_found),
            notes=tuple(notes_found.result() if notes_found else ()),
            matched=_hits(matched, at), similar=_hits(similar, at), names=names,
        )

    def _count_use(self, tenant: str, segments: Sequence[str], facts: Sequence[str], now: datetime) -> None:
        """The segments a context used count as visits, its facts as uses."""
        if segments:
            self.store.write(tenant, lambda tx: tx.update("Segment", used=segments, now=now), lock=False)
        if facts:
            self.store.write(tenant, lambda tx: tx.update("Fact", used=facts, now=now), lock=False)

    def respond(self, query: str, *, tenant: str | None = None, session_id: str = "default", remember: bool = True, **context: Any) -> str:
        """Answer `query` with the configured LLM over `context_for`'s prompt block; with `remember`, the
        exchange is stored as a turn. If the LLM fails, the user's side is still stored, and LLMError raised."""
        if self._llm is None:
            raise LLMNotConfigured("respond needs an LLM: set AMEM_LLM_BASE_URL (any OpenAI-compatible server) or AMEM_LLM_API_KEY")
        block = self.context_for(query, tenant=tenant, session_id=session_id, **context).prompt()
        try:
            reply = self._llm.complete_json("respond", respond_messages(query, block), RESPOND_SCHEMA, max_tokens=MAX_RESPONSE_TOKENS)
            text = reply.data.get("reply")
            if not isinstance(text, str) or not text.strip():
                self._llm.count_failure("respond")
                raise LLMError("malformed", "the answer has no reply")
        except LLMError:
            if remember:
                self.add_turn(query, "", tenant=tenant, session_id=session_id)
            raise
        if remember:
            self.add_turn(query, text.strip()[: self._max_chars], tenant=tenant, session_id=session_id)
        return text.strip()

    def close(self, timeout: float = 5.0) -> None:
        """Let a settle in flight finish for `timeout` seconds; the sessions not settled yet stay short-term past
        their capacity until their next turn (or `flush`)."""
        with self._settling_lock:
            flying = list(self._settling.values())
        self._settler.shutdown(wait=False, cancel_futures=True)
        wait(flying, timeout=timeout)
        self._threads.shutdown(wait=True)

    def _tenant(self, tenant: str | None) -> str:
        return self._default_tenant if tenant is None else validation.tenant(tenant)

    def _vector(self, vector: np.ndarray) -> list[float]:
        return validation.vector(vector, self.embedder.dimension)

    def _hottest(self, tenant: str, *, include_archived: bool = False) -> list[Segment]:
        rows = self.store.read(tenant, lambda tx: tx.segments(include_archived=include_archived))
        return hottest([s for s, _ in heated(rows, self.settings.heat_params(), self.clock())])

    @staticmethod
    def _join_if_current(tx: Tx, page: Page, segment: SegmentWrite, now: datetime) -> str:
        """Under the tenant's lock: "moved" if the page is no longer short-term (another writer moved it);
        "conflict", writing nothing, if the segment changed or was archived since it was read; else "joined"."""
        if page.id not in {waiting.id for waiting in tx.pages(session=page.session_id, stm=True)}:
            return "moved"
        state = _segment(tx, segment.id)
        if segment.expected_pages is None:
            current = state is None
        else:
            current = state is not None and state.archived_at is None and state.pages == segment.expected_pages
        if not current:
            return "conflict"
        tx.write_segment(segment.id, now, joined=(page.id, segment))
        return "joined"

    def _claim(self, tx: Tx, segment: Segment, now: datetime) -> bool:
        """A promotion claims its segment before it writes anything, only if no other promotion claimed it
        since it was read (the same `promotions` count); the counters it read are taken off, as the paper
        resets them: visits and pages that arrive while it works keep counting."""
        state = _segment(tx, segment.id)
        if state is None or state.archived_at is not None or state.promotions != segment.promotions:
            return False
        tx.update("Segment", [(segment.id, {
            "promotions": state.promotions + 1, "promoted_at": now,
            "visits": max(0, state.visits - segment.visits),
            "interaction_len": max(0, state.interaction_len - segment.interaction_len),
        })])
        return True

    def _write_facts(
        self, tx: Tx, segment_id: str, writes: Sequence[FactWrite], now: datetime
    ) -> tuple[list[FactWrite], list[str]]:
        """The promotion's facts as they still apply to the facts active now, then archiving past each kind's
        capacity; returns the writes made and the archived ids."""
        applied = persona.still_applying(writes, {f.id: f for f, _, _ in tx.facts(None)})
        tx.write_segment(segment_id, now, facts=applied)
        archived = persona.past_capacity([f for f, _, _ in tx.facts(None)], self.settings.fact_capacity)
        tx.update("Fact", [(fact_id, {"archived_at": now}) for fact_id in archived])
        return applied, archived

    @staticmethod
    def _session(session_id: Any) -> str:
        return validation.text(session_id, "session_id", MAX_SESSION_CHARS).strip()


def _then(page: Page, at: datetime | None) -> Page:
    return page if at is None else timeline.page_as_of(page, at)


def _hits(found: Future[list[tuple[Page, float]]] | None, at: datetime | None) -> tuple[PageHit, ...]:
    return tuple(PageHit(_then(page, at), score) for page, score in (found.result() if found else ()))


def _segment(tx: Tx, segment_id: str) -> Segment | None:
    """A segment as it is now, archived or not, with its centroid and keyword counts."""
    found = tx.segments(ids=[segment_id], include_archived=True, with_embedding=True)
    return found[0][0] if found else None


def _window(page: Page, around: Sequence[Page]) -> list[Page]:
    """The pages of `around` (by session and seq) within NEIGHBOURHOOD_TURNS of `page` in its session."""
    return [p for p in around if p.session_id == page.session_id and abs(p.seq - page.seq) <= NEIGHBOURHOOD_TURNS]


def _neighbourhood(window: Sequence[Page]) -> str:
    """The turns around a page, as a session note's neighbourhood reads (time stamps dropped)."""
    return "\n".join(without_stamp(page.text) for page in window)

