"""The write path of an analysed note (A-Mem's note construction, link generation and memory evolution):
candidates → one analysis → composite embeddings → one transaction that keeps history."""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

import numpy as np

from ..core import validation
from ..core.log import event
from ..core.text import distinct_forms, excerpt, split_speaker, vocatives, without_stamp, word_key
from ..embedding import Embedder, composite_text
from ..entities.extract import Extractor, extract, mention_rows, note_mentions
from ..errors import EvolutionConflict, NoteNotFound
from ..llm.analyser import Analyser
from ..llm.heuristic import HeuristicAnalyser
from ..llm.prompts import PROMPT_VERSION
from ..models import LINK_TYPES, Link, Mention, Note, NoteAnalysis, NoteInput, Passage, SearchHit
from ..read.retrieval import Tuning, scored, seed_pool, seeds
from ..settings import Settings
from ..store.base import EvolutionRecord, NoteRevision, NoteStore, NoteTx, Tx
from ..store.records import note_row

NEIGHBOURHOOD_TURNS = 2  # a note's neighbourhood: this many turns before and after it in its session
# Plans of a queued analysis against neighbours that concurrent analyses keep changing: each after the first reuses
# the model's answer, so it costs a read and a write, not a call.
PENDING_ATTEMPTS = 10


def neighbourhood_text(window: Sequence[Note | NoteInput]) -> str:
    """The turns of a window as lines of "Speaker: text" (time stamps dropped: the note has its own)."""
    return "\n".join(without_stamp(n.content) for n in window)


def neighbourhoods(tail: Sequence[Note], new: NoteInput) -> tuple[str, dict[str, tuple[Note, str]]]:
    """The new note's neighbourhood, and the refreshed neighbourhood of each earlier note whose window
    now reaches the new note; `tail` is the session's last notes, oldest first.

    An earlier note's text grows by the new turn at its end and keeps what it read: as-of reads cut the turns
    that joined later off its end (core/timeline.py), so a turn's line rewritten in the middle (its note
    updated since) would show in reads of moments before the rewrite."""
    turns: list[Note | NoteInput] = [*tail, new]
    last = len(turns) - 1
    joined = neighbourhood_text([new])

    def window(i: int) -> str:
        return neighbourhood_text(turns[max(0, i - NEIGHBOURHOOD_TURNS) : i + NEIGHBOURHOOD_TURNS + 1])

    refreshed = {
        note.id: (note, f"{note.neighbourhood}\n{joined}" if note.neighbourhood else window(i))
        for i, note in enumerate(tail) if last - i <= NEIGHBOURHOOD_TURNS
    }
    return window(last), refreshed


def addressed(tail: Sequence[Note], note: NoteInput) -> tuple[str, str] | None:
    """(the speaker a new turn speaks to, the name it calls them by) when it calls someone by name ("Thanks,
    Kate!"): the one it answers is its session's last other speaker. How a question may name that speaker."""
    names = vocatives(note.content, note.speaker) if note.speaker else []
    other = next((n.speaker for n in reversed(tail) if n.speaker and n.speaker != note.speaker), None)
    return (other, names[0]) if names and other else None


# Link candidates are found by what a note says, not by the turns around it (`neighbourhood`), which
# would offer every note of the same stretch of dialogue.
CANDIDATE_SEARCH = Tuning(fields={"content": 1.0, "context": 1.0, "keywords": 1.0, "tags": 1.0}, dense_weight=0.6)


def candidate_text(content: str) -> str:
    """What candidates are searched with: the content without a leading time stamp or speaker, which
    would make every short turn of a dialogue look alike."""
    return split_speaker(content)[1] or content


@dataclass(frozen=True)
class Revision:
    """New derived fields for an existing note, valid only if the note is still at `expected_version`."""

    id: str
    expected_version: int
    reason: str
    embedding: np.ndarray | None  # None keeps the vector (a neighbourhood refresh changes no embedded field)
    context: str | None = None
    tags: tuple[str, ...] | None = None
    keywords: tuple[str, ...] | None = None
    analysis: str | None = None  # set when the note's own analysis is redone (reanalyze)
    model: str | None = None
    neighbourhood: str | None = None
    derived: bool = False  # only derived text changes (the neighbourhood as later turns arrive): no new version

    def stored(self, dimension: int) -> NoteRevision:
        """What the store writes: the fields that change (`content` never does: what was said stays), and the
        model with the analysis that produced it; a change of derived text alone keeps no version."""
        values: dict[str, Any] = {
            name: value for name in ("context", "tags", "keywords", "neighbourhood", "analysis")
            if (value := getattr(self, name)) is not None
        }
        if self.analysis is not None:
            values["model"] = self.model
        vector = None if self.embedding is None else validation.vector(self.embedding, dimension)
        return NoteRevision(self.id, values, self.reason, vector, versioned=not self.derived)


@dataclass(frozen=True)
class EvolutionWrite:
    """Everything one analysed add (or reanalysis) writes, in one transaction."""

    id: str
    trigger_id: str
    note: NoteInput | None  # the new note, or None when the trigger already exists (reanalysis)
    embedding: np.ndarray | None  # the new note's composite vector
    neighbourhood: str  # the new note's session turns around it ('' without a session)
    revisions: tuple[Revision, ...]
    links: tuple[Link, ...]
    contradictions: tuple[tuple[str, str, str], ...]  # (older note id, newer note id, reason)
    analysis: str
    model: str | None
    prompt_version: str | None
    prompt_tokens: int
    completion_tokens: int
    decision: dict[str, Any]
    mentions: tuple[Mention, ...] = ()  # the entities the trigger names
    passages: tuple[Passage, ...] = ()  # the new note's, when it is longer than the model's window
    called: tuple[str, str] | None = None  # the new note's (addressee, name it calls them by): `addressed`
    extracted: str | None = None  # the extractor that found its mentions (Extractor.version)
    queued: bool = False  # the new note waits for the model's analysis: stored with this offline one, marked pending
    given: tuple[str, ...] = ()  # the derived fields the caller set on the new note
    pending: bool = False  # the trigger's queued analysis: applied only while the trigger still waits for it


@dataclass(frozen=True)
class EvolutionOutcome:
    note_id: str
    created: bool  # a new note was written (False for a repeat add, which writes nothing, and for reanalysis)
    revised: tuple[tuple[str, int], ...] = ()  # (note id, version kept) per revision
    decision: dict[str, Any] = field(default_factory=dict)
    note: Note | None = None  # the note as the write left it, links included (None for a repeat add)
    calls: bool = False  # the new note calls a speaker by a name ("Thanks, Kate!"), which may make it an alias


GIVEN_FIELDS = ("keywords", "tags", "context")  # the derived fields a caller may set, which no analysis overwrites


def given_fields(note: NoteInput) -> tuple[str, ...]:
    """The derived fields a caller set on a new note."""
    return tuple(name for name in GIVEN_FIELDS if getattr(note, name))


def identity(note: NoteInput) -> tuple[str, str]:
    """What makes a note a repeat in its tenant: its source ('' for none) and the hash of its content."""
    return note.source or "", validation.content_hash(note.content)


def apply_evolution(
    tx: Tx, write: EvolutionWrite, *, dimension: int, link_budget: int, allow_stale: bool
) -> EvolutionOutcome:
    """Write an evolution under the tenant's lock: the note, the revisions still valid, links to notes that
    exist, supersessions, the link budget and the Evolution node. Raises EvolutionConflict if a revised note
    moved on since it was read, unless `allow_stale`, which skips those revisions (and records that); a
    reanalysis whose own note moved on is never applied, since its analysis described another version."""
    row = None
    if write.note is not None:
        if write.embedding is None:
            raise ValueError("a new note needs its vector")
        # Created first: a repeat add stops here, and a conflict below rolls the creation back with the rest.
        row = note_row(write.note, write.embedding, "pending" if write.queued else write.analysis, write.model,
                       dimension, write.neighbourhood, write.passages, write.called, write.extracted, write.given)
        note_id, created = tx.create_notes([row])[0]
        if not created:
            return EvolutionOutcome(note_id, created=False)
    # One read serves the version check and the link budget (the links made below are folded into it).
    targets = {link.target_id for link in write.links}
    read = tx.notes(ids=sorted({write.trigger_id} | targets | {r.id for r in write.revisions}), links=True)
    if write.pending and next((n.analysis for n in read if n.id == write.trigger_id), None) != "pending":
        return EvolutionOutcome(write.trigger_id, created=False)  # gone, or another worker applied it: never twice
    current = {n.id: n.version for n in read}
    stale = [r.id for r in write.revisions if current.get(r.id) != r.expected_version]
    if stale and (not allow_stale or (row is None and write.trigger_id in stale)):
        raise EvolutionConflict(stale)
    # An archived note stays as it was archived until it is restored: an evolution planned before a retention run
    # archived a neighbour neither revises it, links to it nor supersedes it (the lock orders the two writes).
    archived = {n.id for n in read if n.archived_at is not None and n.id != write.trigger_id}
    known = (current.keys() - archived) | {write.trigger_id}
    made = tx.link([link for link in write.links if link.target_id in current.keys() - archived], write.id,
                   supersede=[c for c in write.contradictions if {c[0], c[1]} <= known])
    linked = {write.trigger_id} | {link.target_id for link in made} if made else set()
    dropped = _over_budget([_with_links(n, made) for n in read if n.id in linked], link_budget)
    tx.link(dropped, write.id, invalidate="link budget")
    seen = (write.note.event_time if write.note else None) or validation.now()
    tx.mention(mention_rows(write.trigger_id, write.mentions, seen))
    decision = {
        **write.decision, **({"queued": True} if write.pending else {}),  # `check`: a queued analysis applies once
        "skipped_stale": stale, "skipped_archived": sorted(archived),
        "link_budget_invalidated": [{"source_id": d.source_id, "target_id": d.target_id, "type": d.type} for d in dropped],
    }
    # Revised last: the Evolution node, recorded with the revisions, ties the versions they kept.
    revised = tx.revise([r.stored(dimension) for r in write.revisions if r.id not in stale and r.id not in archived],
                        EvolutionRecord(write.id, write.trigger_id, write.analysis, write.model, write.prompt_version,
                                        json.dumps(decision, sort_keys=True), write.prompt_tokens, write.completion_tokens))
    # Read back here, not after: the caller gets the note without a transaction of its own.
    note = tx.notes(ids=[write.trigger_id], links=True)
    return EvolutionOutcome(write.trigger_id, created=row is not None, revised=tuple(revised), decision=decision,
                            note=note[0] if note else None, calls=row is not None and write.called is not None)


def revise_if_current(tx: NoteTx, revision: NoteRevision, expected_version: int) -> None:
    """A caller's change applies only to the version it was computed from (EvolutionConflict otherwise)."""
    found = tx.notes(ids=[revision.id])
    if not found:
        raise NoteNotFound(f"no note {revision.id!r} in tenant {tx.tenant!r}")
    if found[0].version != expected_version:
        raise EvolutionConflict([revision.id])
    tx.revise([revision], None)


_NOTE_ID = re.compile(r"(?:\bnote\s+)?['\"]?\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b['\"]?",
                      re.IGNORECASE)


def readable(reason: str, notes: Mapping[str, Note | NoteInput]) -> str:
    """A reason as a person can follow it: a note it names by id (as a model may) named by its words instead."""
    def words(match: re.Match[str]) -> str:
        named = notes.get(match.group(1).lower())
        return excerpt(named.content) if named is not None else match.group(0)

    return _NOTE_ID.sub(words, reason)


def _with_links(note: Note, made: Sequence[Link]) -> Note:
    """A note's links as they stand after `made` were created or updated (a link is its ends and type)."""
    links = {(s.source_id, s.target_id, s.type): s for s in note.links}
    links.update({(s.source_id, s.target_id, s.type): s for s in made if note.id in (s.source_id, s.target_id)})
    return replace(note, links=tuple(links.values()))


def _over_budget(notes: Sequence[Note], budget: int) -> list[Link]:
    """Past the budget, a note's weakest valid links (lowest confidence, then oldest) go; the notes are weighed
    in id order, each without the links the ones before it dropped."""
    dropped: dict[tuple[str, str, str], Link] = {}
    for note in sorted(notes, key=lambda n: n.id):
        valid = [s for s in note.links if s.invalid_at is None and (s.source_id, s.target_id, s.type) not in dropped]
        valid.sort(key=lambda s: (s.confidence, s.created_at is None, s.created_at or _EPOCH, s.source_id, s.target_id, s.type))
        for weakest in valid[: max(0, len(valid) - budget)]:
            dropped[(weakest.source_id, weakest.target_id, weakest.type)] = weakest
    return list(dropped.values())


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class _Change:
    """A planned revision of an existing note; None leaves a field as it is."""

    note: Note
    reason: str
    context: str | None
    tags: tuple[str, ...] | None
    neighbourhood: str | None

    @property
    def derived(self) -> bool:
        return self.context is None and self.tags is None


class Evolver:
    """Adds and re-analyses notes; an add makes at most one analyser call per attempt, and attempts
    repeat only when a concurrent add changed a neighbour between analysis and write."""

    def __init__(
        self, store: NoteStore, embedder: Embedder, analyser: Analyser, settings: Settings,
        extractor: Extractor | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.analyser = analyser
        self.settings = settings
        self.extractor = extractor
        self.offline = HeuristicAnalyser()  # what a queued note holds until the model's analysis arrives
        self._extraction = ThreadPoolExecutor(max_workers=1, thread_name_prefix="amem-extract")

    def close(self) -> None:
        self._extraction.shutdown(wait=True)

    def add(
        self, tenant: str, note: NoteInput, *, neighbourhood: str | None = None, queued: bool = False,
    ) -> EvolutionOutcome:
        """Store a validated note with its analysis, links and neighbour evolution; a repeat returns the original.
        `neighbourhood` gives the turns around a note that has no session here (a page promoted from the
        tiers, whose dialogue order lives on its pages). `queued`: the offline analysis of the note alone now (its
        keywords, context and tags), the analyser's later, links and evolution with it (`analyse_pending`, by a
        worker): the note is stored marked pending."""
        query = candidate_text(note.content)
        session = note.session
        # A queued note links and evolves when the model's analysis comes: no candidates now (the add stays short).
        known, lexical, tail = self.store.read(tenant, lambda tx: self._first_reads(tx, note, query, not queued))
        if known:
            return EvolutionOutcome(known[0].id, created=False)
        # What the note mentions is found on a second thread while the model embeds it (once for every attempt).
        assistant = self.settings.tiers.assistant
        extraction = self._extraction.submit(lambda: extract(self.extractor, [note], assistant=assistant)[0])
        # A note longer than the model reads is embedded once: its composite's vector is its content's (what is
        # appended is cut off), and the candidates are searched with that too.
        whole = self.embedder.fills_window(note.content)
        vector = self.embedder.embed_one(note.content if whole else query)
        passages = self.embedder.passages([note.content])[0]
        extracted = extraction.result()
        first_read = [(lexical, tail)]

        def plan() -> EvolutionWrite:
            # A later attempt reads again: the neighbours moved on since the first read.
            lexical, tail = first_read.pop() if first_read else (None, self._session_tail(tenant, session))
            hits = [] if queued else self._candidates(tenant, query, vector, lexical=lexical)
            analysis = (self.offline if queued else self.analyser).analyse(note, hits)
            write = self._plan(note, analysis, hits, tail=tail, neighbourhood=neighbourhood,
                               extracted=extracted, vector=vector if whole else None, passages=passages)
            return replace(write, queued=True, given=given_fields(note)) if queued else write

        outcome = self._attempts(tenant, note.id, plan)
        if outcome is None:  # cannot happen: the last attempt of an add skips stale neighbours instead
            raise EvolutionConflict([note.id])
        return outcome

    def _first_reads(
        self, tx: Tx, note: NoteInput, query: str, candidates: bool = True,
    ) -> tuple[list[Note], list[tuple[Note, float]] | None, list[Note]]:
        """One read for what an add needs before its analysis and does not need the vector for: whether it is
        a repeat, the fulltext candidates (when asked), and its session's last turns."""
        known = tx.notes(keys=[identity(note)])
        if known:
            return known, None, []
        k = self.settings.candidates if candidates else 0
        lexical = scored(tx.search(seed_pool(k), text=query, fields=CANDIDATE_SEARCH.fields)) if k else None
        tail = tx.notes(session=note.session, limit=2 * NEIGHBOURHOOD_TURNS) if note.session else []
        return known, lexical, tail

    def _session_tail(self, tenant: str, session: str | None) -> list[Note]:
        if not session:
            return []
        return self.store.read(tenant, lambda tx: tx.notes(session=session, limit=2 * NEIGHBOURHOOD_TURNS))

    def reanalyze(self, tenant: str, note_id: str) -> EvolutionOutcome | None:
        """Analyse an existing note again with the configured analyser; None if the analysis degraded
        (the note keeps what it has)."""

        def plan() -> EvolutionWrite | None:
            found = self.store.read(tenant, lambda tx: tx.notes(ids=[note_id], links=True))
            if not found:
                raise NoteNotFound(f"no note {note_id!r} in tenant {tenant!r}")
            current = found[0]
            note = NoteInput(
                content=current.content, source=current.source, category=current.category,
                importance=current.importance, event_time=current.event_time, id=current.id,
            )
            query = candidate_text(note.content)
            candidates = self._candidates(tenant, query, self.embedder.embed_one(query), exclude=current.id)
            analysis = self.analyser.analyse(note, candidates)
            if analysis.analysis == "degraded":
                return None
            return self._plan(note, analysis, candidates, existing=current)

        return self._attempts(tenant, note_id, plan)

    def analyse_pending(self, tenant: str, note_id: str) -> EvolutionOutcome | None:
        """Apply the analysis a queued note waits for, as an add would have (its derived fields, links, evolution
        of its neighbours, supersession), once: None when there is nothing to apply (the note is gone or analysed
        already). The fields its caller set stay; a failed call applies the offline analysis, marked degraded."""

        asked: list[tuple[NoteInput, NoteAnalysis, list[SearchHit]]] = []  # the model's answer, for every attempt

        def plan() -> EvolutionWrite | None:
            found = self.store.read(tenant, lambda tx: tx.notes(ids=[note_id], links=True))
            if not found or found[0].analysis != "pending":
                return None
            current = found[0]
            note = NoteInput(
                content=current.content, source=current.source, category=current.category,
                importance=current.importance, event_time=current.event_time, id=current.id,
                session=current.session, speaker=current.speaker,
                **{name: getattr(current, name) for name in current.given if name in GIVEN_FIELDS},
            )
            if asked and asked[0][0] == note:
                # A concurrent write moved a neighbour on: the answer stands, applied to the neighbours as they are
                # now (another call would cost what the first did and decide the same).
                _, analysis, offered = asked[0]
                candidates = self._current(tenant, offered)
            else:
                query = candidate_text(note.content)
                candidates = self._candidates(tenant, query, self.embedder.embed_one(query), exclude=current.id)
                analysis = self.analyser.analyse(note, candidates)
                asked[:] = [(note, analysis, candidates)]
            return replace(self._plan(note, analysis, candidates, existing=current, reason="analysis"), pending=True)

        outcome = self._attempts(tenant, note_id, plan, max(PENDING_ATTEMPTS, self.settings.evolution_attempts))
        return outcome if outcome is not None and outcome.decision else None

    # -- internals --------------------------------------------------------------------------------

    def _attempts(
        self, tenant: str, note_id: str, plan: Callable[[], EvolutionWrite | None], attempts: int | None = None,
    ) -> EvolutionOutcome | None:
        attempts = max(1, self.settings.evolution_attempts if attempts is None else attempts)
        for attempt in range(1, attempts + 1):
            write = plan()
            if write is None:
                return None
            try:
                return self._apply(tenant, write, allow_stale=attempt == attempts)
            except EvolutionConflict as conflict:
                event("evolution_conflict", logging.INFO, note_id=note_id, attempt=attempt, stale=conflict.stale)
        # Only a reanalysis gets here (an add's last attempt skips stale neighbours): its note kept changing.
        event("reanalysis_abandoned", note_id=note_id, attempts=attempts)
        return None

    def _current(self, tenant: str, hits: Sequence[SearchHit]) -> list[SearchHit]:
        """The hits with their notes as they are now (those deleted since left out)."""
        now = {n.id: n for n in self.store.read(tenant, lambda tx: tx.notes(ids=[hit.note.id for hit in hits]))}
        return [replace(hit, note=now[hit.note.id]) for hit in hits if hit.note.id in now]

    def _apply(self, tenant: str, write: EvolutionWrite, *, allow_stale: bool) -> EvolutionOutcome:
        return self.store.write(tenant, lambda tx: apply_evolution(
            tx, write, dimension=self.embedder.dimension, link_budget=self.settings.link_budget, allow_stale=allow_stale,
        ))

    def _candidates(
        self, tenant: str, query: str, vector: np.ndarray, *, exclude: str | None = None,
        lexical: list[tuple[Note, float]] | None = None,
    ) -> list[SearchHit]:
        """Hybrid search for the notes the analyser may link to and evolve (valid notes only); `lexical`, the
        fulltext hits when they were read already. Their vector scores are on the reference model's scale, which
        the analysers' thresholds are set on (Embedder.similarity)."""
        if self.settings.candidates == 0:
            return []
        k = self.settings.candidates + (exclude is not None)
        hits = seeds(self.store, tenant, query, vector, k, tuning=CANDIDATE_SEARCH, lexical=lexical,
                     cosine_unit=self.embedder.cosine_unit)
        similarity = self.embedder.similarity
        return [replace(hit, vector_score=None if hit.vector_score is None else (1 + similarity(2 * hit.vector_score - 1)) / 2)
                for hit in hits if hit.note.id != exclude][: self.settings.candidates]

    def _plan(
        self, note: NoteInput, analysis: NoteAnalysis, candidates: Sequence[SearchHit], *,
        existing: Note | None = None, tail: Sequence[Note] = (), neighbourhood: str | None = None,
        extracted: Sequence[Mention] | None = None, vector: np.ndarray | None = None,
        passages: Sequence[Passage] | None = None, reason: str = "reanalysis",
    ) -> EvolutionWrite:
        """The write an analysis makes; `vector` and `passages`, the new note's own when they are known already;
        `reason`, that of the revision of an `existing` note's own fields."""
        by_id = {hit.note.id: hit.note for hit in candidates}
        analysis = self._offered_only(note.id, analysis, by_id)
        own = NoteInput(  # what the caller gave wins over what was derived
            content=note.content, source=note.source, category=note.category, importance=note.importance,
            event_time=note.event_time, id=note.id, session=note.session, speaker=note.speaker,
            keywords=note.keywords or distinct_forms(analysis.keywords), tags=note.tags or distinct_forms(analysis.tags),
            context=note.context or analysis.context,
        )
        own_neighbourhood, refreshed = neighbourhoods(tail, own) if existing is None and note.session else ("", {})
        own_neighbourhood = own_neighbourhood if neighbourhood is None else neighbourhood
        changes: list[_Change] = []
        for update in analysis.updates:
            neighbour = by_id[update.id]
            removed = {word_key(t) for t in update.remove_tags}
            tags = tuple(t for t in neighbour.tags if word_key(t) not in removed)
            held = {word_key(t) for t in tags}
            tags += tuple(t for t in distinct_forms(update.add_tags) if word_key(t) not in held)
            context = update.context if update.context and update.context != neighbour.context else None
            if context is None and tags == neighbour.tags:
                continue
            grown = refreshed.pop(neighbour.id, (neighbour, None))[1]
            reason = readable(update.reason, {**by_id, str(note.id): own})
            changes.append(_Change(neighbour, reason, context, tags if tags != neighbour.tags else None, grown))
        changes += [_Change(neighbour, "", None, None, grown) for neighbour, grown in refreshed.values()]
        # A neighbour longer than the model reads keeps its vector: new context or tags would be cut off.
        embedded = [c for c in changes if (c.context is not None or c.tags is not None)
                    and not self.embedder.fills_window(c.note.content)]
        texts = [] if vector is not None else [composite_text(own.content, own.context, own.keywords, own.tags)]
        texts += [
            composite_text(
                c.note.content, c.context or c.note.context, c.note.keywords, c.note.tags if c.tags is None else c.tags
            )
            for c in embedded
        ]
        vectors = self.embedder.embed(texts)
        if vector is not None:
            vectors = np.vstack([vector[None, :], vectors])
        vector_of = {c.note.id: v for c, v in zip(embedded, vectors[1:], strict=True)}
        revisions = [
            Revision(
                c.note.id, c.note.version, c.reason, vector_of.get(c.note.id), context=c.context, tags=c.tags,
                neighbourhood=c.neighbourhood, derived=c.derived,
            )
            for c in changes
        ]
        if existing is not None:  # reanalysis: the note's own derived fields are a revision too
            same = (own.context, own.tags, own.keywords) == (existing.context, existing.tags, existing.keywords)
            revisions.insert(
                0,
                Revision(
                    existing.id, existing.version, reason, vectors[0], context=own.context, tags=own.tags,
                    keywords=own.keywords, analysis=analysis.analysis, model=analysis.model,
                    derived=same,  # an analysis that changes none of its fields keeps no version
                ),
            )
        named = {**by_id, str(note.id): own}
        links = tuple(
            Link(note.id, link.target_id, link.type, readable(link.reason, named), link.confidence)
            for link in analysis.links
        )
        contradictions = tuple(
            self._contradiction(note, existing, by_id[link.target_id], readable(link.reason, named))
            for link in analysis.links if link.type == "CONTRADICTS"
        )
        own_passages = () if existing else passages if passages is not None else self.embedder.passages([own.content])[0]
        given = None if analysis.entities is None else [analysis.entities]
        found = [extracted] if extracted is not None else extract(self.extractor, [own], assistant=self.settings.tiers.assistant)
        mentions = note_mentions([own], found, given)[0]
        decision = {
            "links": [asdict(link) for link in analysis.links],
            "updates": [asdict(update) for update in analysis.updates],
            "revisions": [r.id for r in revisions if not r.derived],  # the updates that change something
            "dropped": list(analysis.dropped),
            "degraded": analysis.degraded_reason,
            "superseded": [old for old, _, _ in contradictions],
        }
        return EvolutionWrite(
            id=str(uuid.uuid4()), trigger_id=note.id, note=None if existing else own,
            embedding=None if existing else vectors[0], neighbourhood=own_neighbourhood,
            revisions=tuple(revisions), links=links,
            contradictions=contradictions, analysis=analysis.analysis, model=analysis.model,
            prompt_version=PROMPT_VERSION if analysis.analysis == "llm" else None,
            prompt_tokens=analysis.prompt_tokens, completion_tokens=analysis.completion_tokens, decision=decision,
            mentions=tuple(mentions), passages=tuple(own_passages),
            called=addressed(tail, own) if existing is None else None,
            extracted=self.extractor.version if self.extractor is not None else None,
        )

    @staticmethod
    def _offered_only(note_id: str, analysis: NoteAnalysis, offered: dict[str, Note]) -> NoteAnalysis:
        """Whatever the analyser, only offered candidates and known link types reach the graph."""
        links = tuple(link for link in analysis.links if link.target_id in offered and link.type in LINK_TYPES)
        updates = tuple(update for update in analysis.updates if update.id in offered)
        if len(links) == len(analysis.links) and len(updates) == len(analysis.updates):
            return analysis
        dropped = [f"link to {link.target_id!r} ({link.type}): not offered or unknown type"
                   for link in analysis.links if link not in links]
        dropped += [f"update of {update.id!r}: not offered" for update in analysis.updates if update not in updates]
        for reason in dropped:
            event("analysis_dropped", logging.INFO, note_id=note_id, reason=reason, analysis=analysis.analysis)
        return replace(analysis, links=links, updates=updates, dropped=analysis.dropped + tuple(dropped))

    @staticmethod
    def _contradiction(note: NoteInput, existing: Note | None, other: Note, reason: str) -> tuple[str, str, str]:
        """(older, newer, reason): the fact that held earlier is the one invalidated. Event times are
        compared when both notes have one, else the times they were stored; a new note counts as now."""
        if note.event_time is not None and other.event_time is not None:
            mine, theirs = note.event_time, other.event_time
        else:
            mine = (existing.created_at if existing else None) or datetime.now(timezone.utc)
            theirs = other.created_at or datetime.now(timezone.utc)
        return (other.id, note.id, reason) if theirs <= mine else (note.id, other.id, reason)


__all__ = ["GIVEN_FIELDS", "EvolutionOutcome", "EvolutionWrite", "Evolver", "Revision", "apply_evolution", "given_fields", "identity", "revise_if_current"]
