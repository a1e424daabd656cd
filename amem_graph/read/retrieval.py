"""Retrieval: seeds from the vector and fulltext indexes, fused; priors; graph expansion along typed links
and session order; results that say why each note was found."""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Literal

import numpy as np

from ..core import validation
from ..core.entity_keys import entity_key, query_keys
from ..core.log import event
from ..core.text import STOP_WORDS, stem, without_stamp
from ..core.timeline import note_as_of
from ..core.tuning import DENSE_WEIGHT, Fusion, Tuning
from ..embedding import Embedder
from ..errors import AmemError, SchemaMismatch
from ..models import NO_FILTER, Entity, Note, SearchFilter, SearchHit, Step
from ..store.base import NoteStore, Tx, vectors_current

Mode = Literal["hybrid", "vector", "fulltext"]
MODES: tuple[str, ...] = ("hybrid", "vector", "fulltext")
RERANK_WINDOW = 40  # notes the session score and MMR re-rank: the same for every k, so k=5 is a prefix of k=25
SPEAKER_TTL_S = 30.0  # how long a tenant's speaker list is trusted before it is read again
# Retrieval counts are gathered this long and written together: one small write a second, not one per search
# competing with the next search for the CPU. A process killed in between loses those counts (not notes).
ACCESS_FLUSH_S = 1.0


def _min_max(scores: Sequence[float]) -> list[float]:
    low, high = min(scores), max(scores)
    if high - low < 1e-12:
        return [1.0] * len(scores)
    return [(s - low) / (high - low) for s in scores]


def fuse(
    vector_hits: Sequence[tuple[Note, float]],
    fulltext_hits: Sequence[tuple[Note, float]],
    k: int,
    dense_weight: float = DENSE_WEIGHT,
    *,
    fusion: Fusion = "minmax",
    rrf_k: int = 60,
) -> list[SearchHit]:
    """Weighted min-max fusion, α·minmax(dense) + (1−α)·minmax(BM25), or reciprocal rank fusion
    Σ 1/(rrf_k + rank); a list missing a note adds 0."""
    notes: dict[str, Note] = {}
    raw: dict[str, dict[str, float]] = {"vector": {}, "fulltext": {}}
    scaled: dict[str, dict[str, float]] = {"vector": {}, "fulltext": {}}
    for name, hits in (("vector", vector_hits), ("fulltext", fulltext_hits)):
        if not hits:
            continue
        if fusion == "rrf":  # scaled so that rank 1 scores 1, as the best of a min-max list does
            parts = [(rrf_k + 1) / (rrf_k + rank) for rank in range(1, len(hits) + 1)]
        else:
            parts = _min_max([s for _, s in hits])
        for (note, score), part in zip(hits, parts, strict=True):
            notes.setdefault(note.id, note)
            raw[name][note.id] = score
            scaled[name][note.id] = part
    weight = dense_weight if fusion == "minmax" else 0.5
    if not vector_hits or not fulltext_hits:  # one list (one mode, or a query one index cannot match)
        weight = 1.0 if vector_hits else 0.0
    fused = [
        SearchHit(
            note,
            score := weight * scaled["vector"].get(note_id, 0.0) + (1 - weight) * scaled["fulltext"].get(note_id, 0.0),
            raw["vector"].get(note_id),
            raw["fulltext"].get(note_id),
            seed_score=score,
        )
        for note_id, note in notes.items()
    ]
    fused.sort(key=lambda hit: (-hit.score, hit.note.id))
    return fused[:k]


def scored(matches: Sequence[tuple[Note, float, tuple[int, int] | None]]) -> list[tuple[Note, float]]:
    """A store search's matches as (note, score)."""
    return [(note, score) for note, score, _ in matches]


def dense_search(
    tx: Tx, vector: Sequence[float], k: int, *, filters: SearchFilter = NO_FILTER, brief: bool = False,
    passages: bool = True, margin: float = 0.0,
) -> tuple[list[tuple[Note, float]], dict[str, tuple[int, int]]]:
    """The k nearest notes, each by its best vector: its own (the first window of its text, with what was derived
    from it) or, for a long note, its best passage (unless not `passages`) at its cosine less `margin`; and the
    span of each note whose passage won."""
    notes = scored(tx.search(k, vector=vector, filters=filters, brief=brief))
    found = tx.search(k, vector=vector, passages=True, filters=filters, brief=brief) if passages else []
    if not found:
        return notes, {}
    best = {note.id: (note, score) for note, score in notes}
    spans: dict[str, tuple[int, int]] = {}
    for note, score, (start, end) in found:  # type: ignore[misc]  # a passage's match has its span
        score -= margin / 2  # the index's scores are (1 + cosine) / 2
        if note.id not in best or score > best[note.id][1]:
            best[note.id] = (note, score)
            spans[note.id] = (start, end)
    ranked = sorted(best.values(), key=lambda pair: (-pair[1], pair[0].id))[:k]
    return ranked, {note.id: spans[note.id] for note, _ in ranked if note.id in spans}


def with_passages(hits: list[SearchHit], spans: dict[str, tuple[int, int]]) -> list[SearchHit]:
    """Hits that say which passage of their note matched, where one did."""
    return [replace(hit, passage=spans[hit.note.id]) if hit.note.id in spans else hit for hit in hits] if spans else hits


def seed_pool(k: int, mode: Mode = "hybrid") -> int:
    """How many notes each index is asked for: fusion needs more than the k it keeps."""
    return k if mode != "hybrid" else max(2 * k, 20)


def seeds(
    store: NoteStore, tenant: str, query: str, vector: np.ndarray | None, k: int, *, mode: Mode = "hybrid",
    filters: SearchFilter = NO_FILTER, tuning: Tuning | None = None, lexical: list[tuple[Note, float]] | None = None,
    cosine_unit: float = 1.0,
) -> list[SearchHit]:
    """The k best notes for a query from the vector index, the fulltext index, or both fused, in one read.
    `vector` is the query's embedding (needed unless mode is "fulltext"); `lexical`, the fulltext hits
    (`seed_pool(k)` of them) when the caller read them already; `cosine_unit`, the embedding model's
    (Embedder.cosine_unit), which the passage margin is scaled by."""
    tuning = tuning or Tuning()
    pool = seed_pool(k, mode)
    dense_wanted = mode in ("hybrid", "vector") and vector is not None
    lexical_wanted = mode in ("hybrid", "fulltext") and lexical is None
    query_vector = _query_vector(vector, store) if dense_wanted and vector is not None else []

    def both(tx: Tx) -> tuple[tuple[list[tuple[Note, float]], dict[str, tuple[int, int]]], list[tuple[Note, float]]]:
        dense = (dense_search(tx, query_vector, pool, filters=filters, passages=tuning.passages,
                              margin=tuning.passage_margin * cosine_unit)
                 if dense_wanted and comparable(tx, store) else ([], {}))
        found = scored(tx.search(pool, text=query, filters=filters, fields=tuning.fields)) if lexical_wanted else []
        return dense, found

    (dense, spans), found = store.read(tenant, both) if dense_wanted or lexical_wanted else (([], {}), [])
    return with_passages(fuse(dense, found if lexical is None else lexical, k, tuning.dense_weight,
                              fusion=tuning.fusion, rrf_k=tuning.rrf_k), spans)


_WHEN = re.compile(r"^\s*when\b|\b(what|which) (date|day|year|month|time)\b|\bhow long ago\b", re.IGNORECASE)
_TIME_WORDS = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|last|next|this|weekend|week|month|year|since|recently|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|\d{4})\b",
    re.IGNORECASE,
)
_WORDS = re.compile(r"[a-z0-9]+")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_NAMED_DAYS = (  # (pattern, where the day, month and year are in its groups)
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})\b", re.IGNORECASE), (1, 2, 3)),
    (re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+(\d{{4}})\b", re.IGNORECASE), (2, 1, 3)),
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), (3, 2, 1)),
    (re.compile(r"\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b"), (1, 2, 3)),  # 19.01.2024: day first
)


def named_days(query: str) -> frozenset[date]:
    """The calendar days a question names ("on 19.01.2024", "October 13, 2023", "13 October 2023", ISO dates)."""
    days = set()
    for pattern, (d, m, y) in _NAMED_DAYS:
        for match in pattern.finditer(query):
            month = match.group(m)
            number = int(month) if month.isdigit() else next(
                (i + 1 for i, name in enumerate(_MONTHS) if name.startswith(month.lower().rstrip(".")[:3])), 0)
            try:
                days.add(date(int(match.group(y)), number, int(match.group(d))))
            except ValueError:
                continue  # no such day: the question's numbers are not a date
    return frozenset(days)
QUERY_STOP_WORDS = STOP_WORDS - {"time", "times", "day", "days", "week", "weeks", "month", "months", "year", "years",
                                  "yesterday", "today", "tonight", "tomorrow", "ago", "last", "next", "new"}


@dataclass(frozen=True)
class Speakers:
    """Who speaks in a tenant's notes and the names a question may call them by: each speaker's name, its first
    word, and the name the others call them by in the chat ("Hey Kate!"), which may not be the name they speak
    under. Case is ignored: chat names are often written in lower case."""

    names: Mapping[str, str] = field(default_factory=dict)  # a name in lower case → the speaker as stored

    @classmethod
    def of(cls, speakers: Sequence[str], calls: Sequence[tuple[str, str, int]] = ()) -> Speakers:
        """From the speakers and the vocatives of their notes ((speaker addressed, name, times)): a name becomes
        a speaker's alias when it names no speaker already, and the others call them by it at least ALIAS_MIN_CALLS
        times and ALIAS_LEAD times as often as by any other such name."""
        names: dict[str, str] = {}
        for speaker in sorted(speakers, key=len):  # a full name wins over another speaker's first word
            for name in ((speaker.split() or [speaker])[0], speaker):
                names[name.casefold()] = speaker
        by_speaker: dict[str, Counter[str]] = {}
        for speaker, name, times in calls:  # a name that names a speaker already is no new one
            if speaker in speakers and name.casefold() not in names:
                by_speaker.setdefault(speaker, Counter())[name.casefold()] += times
        for speaker, counted in by_speaker.items():
            (name, times), *rest = counted.most_common(2)
            runner_up = rest[0][1] if rest else 0
            if times >= ALIAS_MIN_CALLS and times >= ALIAS_LEAD * runner_up:
                names[name] = speaker
        return cls(names)

    def besides(self, speaker: str) -> tuple[str, ...]:
        """Every speaker but `speaker` (in any case), when `speaker` is one (none otherwise)."""
        every = set(self.names.values())
        theirs = {s for s in every if s.casefold() == speaker.casefold()}
        return tuple(sorted(every - theirs)) if theirs else ()

    def named(self, query: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The speakers a query names, and the words that name them as the query writes them. A capitalised word
        names by any of a speaker's names; a word in lower case, by a name that is no common word."""
        speakers: dict[str, None] = {}
        words: dict[str, None] = {}
        for match in _NAME_WORD.finditer(query):
            word = match.group(1)
            speaker = self.names.get(word.casefold())
            if speaker is None or (word[0].islower() and word.casefold() in STOP_WORDS):
                continue
            speakers[speaker] = None
            words[word] = None
        for speaker in self.names.values():  # a speaker's full name as written ("Caroline Smith")
            if " " in speaker and re.search(rf"\b{re.escape(speaker)}\b", query, re.IGNORECASE):
                speakers.setdefault(speaker, None)
        return tuple(speakers), tuple(words)


_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself)\b|\bI['’](?:m|ve|d|ll)\b", re.IGNORECASE)
ALIAS_MIN_CALLS = 3
ALIAS_LEAD = 3.0
_NAME_WORD = re.compile(r"\b([^\W\d_][\w-]*)(?:'s|’s)?\b")


def without_names(query: str, names: Sequence[str]) -> str:
    """The query without the words that name speakers (a name and its possessive): the dense query then asks
    about the thing, not the person."""
    stripped = query
    for name in names:
        for part in {name, name.split()[0]}:
            stripped = re.sub(rf"\b{re.escape(part)}(?:'s|’s)?(?!\w)", " ", stripped, flags=re.IGNORECASE)
    stripped = " ".join(stripped.split())
    return stripped if _WORDS.search(stripped.lower()) else query


def without_stop_words(query: str) -> str:
    """The words of a query that a BM25 search should weigh (the query itself if none is left)."""
    kept = [w for w in _WORDS.findall(query.lower()) if w not in QUERY_STOP_WORDS]
    return " ".join(kept) or query


def specificity(mentions: int) -> float:
    """How much naming an entity says about a note: 1 / log2(2 + the notes that mention it)."""
    return 1.0 / math.log2(2 + max(0, mentions))


def anchor(hits: list[SearchHit], anchored: Sequence[tuple[Entity, Note, float]], weight: float) -> list[SearchHit]:
    """The candidates with entity anchors added: each note that mentions entities the query names scores
    Σ specificity × confidence over them, scaled by the best such note to `weight` (a boost that names the
    entities); a note only an anchor found joins the candidates with that alone."""
    scores: dict[str, float] = {}
    named: dict[str, list[str]] = {}
    notes: dict[str, Note] = {}
    for entity, note, confidence in anchored:
        scores[note.id] = scores.get(note.id, 0.0) + specificity(entity.mentions) * confidence
        named.setdefault(note.id, []).append(entity.name)
        notes[note.id] = note
    if not scores:
        return hits
    best = max(scores.values())
    out = []
    for hit in hits:
        if (score := scores.pop(hit.note.id, None)) is not None:
            bonus = weight * score / best
            hit = replace(hit, score=hit.score + bonus, boosts=hit.boosts + ((_named(named[hit.note.id]), bonus),))
        out.append(hit)
    out += [SearchHit(notes[i], weight * s / best, boosts=((_named(named[i]), weight * s / best),)) for i, s in scores.items()]
    return out


def _named(names: Sequence[str]) -> str:
    """A boost's label that says which entities earned it: "entity: Luna, Paris"."""
    return "entity: " + ", ".join(sorted(set(names)))


def comparable(tx: Tx, store: NoteStore) -> bool:
    """Whether the query's vector (the engine's model) compares with the stored ones: not while a consolidation
    moves them to another model, nor after it, until the engine opens with that model. Without, a search ranks
    by keyword, entities and the graph."""
    if vectors_current(tx.schema_marker(), store.model):
        return True
    event("search_without_vectors", logging.INFO, store=store.kind, model=store.model)
    return False


def _query_vector(vector: np.ndarray, store: NoteStore) -> list[float]:
    if store.dimension is None:
        raise SchemaMismatch("the store's schema has not been checked yet: open it through AgenticMemory")
    return validation.vector(vector, store.dimension, "query vector")


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _WORDS.findall(text.lower()) if len(w) > 2)


def _as_of(
    tx: Tx, rows: list[tuple[Note, float, list[Step]]], filters: SearchFilter, at: datetime,
) -> list[tuple[Note, float, list[Step]]]:
    """The final notes as the memory held them at `at` (timeline.note_as_of), each checked against the filter
    again: the indexes rank and filter by what the notes say now."""
    kept = tx.history([note.id for note, _, _ in rows]).versions
    then = [(note_as_of(note, kept.get(note.id, ()), at), score, path) for note, score, path in rows]
    return [(note, score, path) for note, score, path in then if note is not None and filters.admits(vars(note))]


class Retriever:
    """Search over one store: seeds, priors, expansion, ranking. Thread-safe; speaker lists are cached."""

    def __init__(
        self, store: NoteStore, embedder: Embedder, tuning: Tuning | None = None, *, assistant: str = "assistant",
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.tuning = tuning or Tuning()
        self.assistant = assistant  # the speaker whose notes are the assistant's: a question in the first person is the user's
        self._speakers: dict[str, tuple[float, Speakers]] = {}
        self._lock = threading.Lock()
        self._threads = ThreadPoolExecutor(max_workers=4, thread_name_prefix="amem-search")
        self._access = ThreadPoolExecutor(max_workers=1, thread_name_prefix="amem-access")
        self._used: dict[str, list[str]] = {}  # tenant → note ids found since the last count was written
        self._closing = threading.Event()

    def search(
        self, tenant: str, query: str, *, k: int, hops: int = 2, mode: Mode = "hybrid",
        filters: SearchFilter = NO_FILTER, count: bool = True,
    ) -> list[SearchHit]:
        """Two transactions: BM25 (brief notes) beside the query's embedding; then k-NN (brief notes), the
        fusion and priors, and expansion with the final notes read in full (cypher/search/expand.cypher), in
        one read transaction."""
        tuning = self.tuning
        names, called = self._named(tenant, query) if tuning.speaker_prior or tuning.strip_names else ((), ())
        pool = max(tuning.pool, k)
        lexical: Future[list[tuple[Note, float]]] | None = None
        if mode in ("hybrid", "fulltext"):
            words = self._lexical(query, called)
            lexical = self._threads.submit(self.store.read, tenant, lambda tx: scored(tx.search(
                pool, text=words, filters=filters, fields=tuning.fields, brief=True,
            )))
        anchored: Future[list[tuple[Entity, Note, float]]] | None = None
        if tuning.entity_weight:
            keys = query_keys(query, skip=frozenset(entity_key(n, kind="person") for n in (*names, *called)))
            anchored = self._threads.submit(self.store.read, tenant, lambda tx: tx.mentioning(
                keys, tuning.entity_notes, filters=filters,
            ))
        vector = None
        if mode in ("hybrid", "vector"):
            vector = _query_vector(self.embedder.embed_query(without_names(query, called) if tuning.strip_names else query), self.store)
        when = bool(_WHEN.search(query))
        days = named_days(query) if tuning.date_boost else frozenset()
        reranked = tuning.session_weight or tuning.mmr is not None
        # Waited for before the transaction: they run in transactions of their own (the embedded store's
        # would wait for this one).
        lexical_hits = lexical.result() if lexical else []
        anchors = anchored.result() if anchored is not None else None

        def ranked(tx: Tx) -> tuple[list[SearchHit], list[tuple[Note, float, list[Step]]]]:
            dense, spans = (dense_search(tx, vector, pool, filters=filters, brief=True, passages=tuning.passages,
                                         margin=tuning.passage_margin * self.embedder.cosine_unit)
                             if vector is not None and comparable(tx, self.store) else ([], {}))
            fused = fuse(dense, lexical_hits, pool, tuning.dense_weight, fusion=tuning.fusion, rrf_k=tuning.rrf_k)
            fused = with_passages(fused, spans)
            fused = [self._prior(hit, names, when, days) for hit in fused]
            if anchors is not None:
                fused = anchor(fused, anchors, tuning.entity_weight)
            fused.sort(key=lambda hit: (-hit.score, hit.note.id))
            if not fused:
                return [], []
            starts = [hit.note.id for hit in fused[: tuning.seeds]] if hops else []
            rows = tx.expand(
                {hit.note.id: hit.score for hit in fused}, starts, hops=hops, decay=tuning.decay, weights=tuning.weights,
                # an as-of search may drop a note whose version of then fails the filter: it asks for more too
                limit=max(k, RERANK_WINDOW) if reranked or filters.as_of else k, names=names if tuning.speaker_prior else (),
                speaker_prior=tuning.speaker_prior, deep_seeds=tuning.deep_seeds, filters=filters,
            )
            return fused, rows if filters.as_of is None else _as_of(tx, rows, filters, filters.as_of)

        fused, rows = self.store.read(tenant, ranked)
        if not fused:
            return []
        by_id = {hit.note.id: hit for hit in fused}
        hits = [self._found(note, score, tuple(path), by_id.get(note.id), names, when) for note, score, path in rows]
        if tuning.session_weight:
            hits = self._by_session(hits)
        hits = self._mmr(hits, k) if tuning.mmr is not None else hits[:k]
        # Counted on a background thread, after the answer; a process that only reads the store counts nothing.
        if hits and count and filters.as_of is None and not getattr(self.store, "read_only", False):
            self._count(tenant, [hit.note.id for hit in hits])
        return hits

    def _count(self, tenant: str, note_ids: list[str]) -> None:
        with self._lock:
            first = not self._used
            self._used.setdefault(tenant, []).extend(note_ids)
        if first:
            self._access.submit(self._record_access)

    def _record_access(self) -> None:
        """After ACCESS_FLUSH_S (or at close), every count gathered meanwhile, one write per tenant."""
        self._closing.wait(ACCESS_FLUSH_S)
        with self._lock:
            used, self._used = self._used, {}
        for tenant, note_ids in used.items():
            try:
                self.store.write(tenant, lambda tx, ids=note_ids: tx.update("Note", used=ids, now=validation.now()), lock=False)
            except AmemError as err:  # a lost count is not worth failing anything for; say so
                event("access_not_recorded", tenant=tenant, notes=len(note_ids), error=str(err))

    def _lexical(self, query: str, names: Sequence[str]) -> str:
        """The BM25 query: Lucene's English stop list is short, so "what did ... do" would weigh as much
        as the words that matter; the engine's fuller list goes first. Falls back to the query itself."""
        if not self.tuning.lexical_names:
            query = without_names(query, names)
        return without_stop_words(query) if self.tuning.lexical_stop_words else query

    def _found(
        self, note: Note, score: float, path: tuple[Step, ...], candidate: SearchHit | None, names: Sequence[str],
        when: bool,
    ) -> SearchHit:
        """A final row as a hit: a candidate keeps its index scores and priors; a note reached by expansion
        shows its path (and the priors the expansion statement added)."""
        if not path and candidate is not None:
            return replace(candidate, note=note, score=score)
        hit = SearchHit(
            note, score, candidate.vector_score if candidate else None, candidate.fulltext_score if candidate else None,
            seed_score=candidate.seed_score if candidate else None, path=path,
            passage=candidate.passage if candidate else None,
        )
        if self.tuning.speaker_prior and note.speaker in names:
            hit = replace(hit, boosts=(("speaker", self.tuning.speaker_prior),))
        return hit

    def close(self) -> None:
        self._closing.set()  # counts still gathering are written now
        self._threads.shutdown(wait=True)
        self._access.shutdown(wait=True)

    def _named(self, tenant: str, query: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The speakers a query is about and the words that name them. A query in the first person that names no
        one is the user's, in a tenant where the assistant speaks too: about what every other speaker said."""
        speakers = self.speakers(tenant)
        names, called = speakers.named(query)
        if not names and self.tuning.first_person and _FIRST_PERSON.search(query):
            names = speakers.besides(self.assistant)
        return names, called

    def speakers(self, tenant: str) -> Speakers:
        with self._lock:
            cached = self._speakers.get(tenant)
        if cached and time.monotonic() - cached[0] < SPEAKER_TTL_S:
            return cached[1]
        speakers = self.store.read(tenant, lambda tx: Speakers.of(*tx.speakers(calls=self.tuning.vocatives)))
        with self._lock:
            self._speakers[tenant] = (time.monotonic(), speakers)
        return speakers

    def heard(self, tenant: str, speakers: Collection[str], *, calls: bool = False) -> None:
        """Notes by `speakers` were added: a new speaker, or a note that calls one by a name (which may make
        that name an alias), is known to the next search, not after the cache expires."""
        with self._lock:
            cached = self._speakers.get(tenant)
            if cached and (calls or set(speakers) - set(cached[1].names.values())):
                del self._speakers[tenant]

    def _prior(self, hit: SearchHit, names: Sequence[str], when: bool, days: frozenset[date] = frozenset()) -> SearchHit:
        boosts: list[tuple[str, float]] = []
        if days and hit.note.event_time is not None and hit.note.event_time.date() in days:
            boosts.append(("date", self.tuning.date_boost))
        if self.tuning.speaker_prior and hit.note.speaker and hit.note.speaker in names:
            boosts.append(("speaker", self.tuning.speaker_prior))
        if self.tuning.when_boost and when and _TIME_WORDS.search(without_stamp(hit.note.content)):
            boosts.append(("time", self.tuning.when_boost))
        if not boosts:
            return hit
        return replace(hit, score=hit.score + sum(b for _, b in boosts), boosts=hit.boosts + tuple(boosts))

    def _by_session(self, hits: list[SearchHit]) -> list[SearchHit]:
        """Add a share of the best score among the other notes of each note's session: turns of a session
        that matched well are likelier to hold the rest of the answer. Never a note's own score, so a note
        alone in its session gains nothing, as a note without a session."""
        top: dict[str, list[float]] = {}  # the two best scores per session: the best other of any note
        for hit in hits:
            if hit.note.session is not None:
                top[hit.note.session] = sorted((*top.get(hit.note.session, ()), hit.score), reverse=True)[:2]
        out = []
        for hit in hits:
            best = top.get(hit.note.session or "", [])
            # The note holding its session's best score gains the runner-up's; every other note, the best.
            others = best[1:] if best and hit.score >= best[0] else best[:1]
            bonus = self.tuning.session_weight * (others[0] if others else 0.0)
            out.append(replace(hit, score=hit.score + bonus, boosts=hit.boosts + (("session", bonus),)) if bonus else hit)
        out.sort(key=lambda hit: (-hit.score, hit.note.id))
        return out

    def _mmr(self, hits: list[SearchHit], k: int) -> list[SearchHit]:
        """Maximal marginal relevance with word-stem overlap (Jaccard) as the similarity."""
        lam = float(self.tuning.mmr or 0.0)
        stems = {hit.note.id: _stems(hit.note.content) for hit in hits}
        chosen: list[SearchHit] = []
        rest = list(hits)
        while rest and len(chosen) < k:
            def value(hit: SearchHit) -> float:
                mine = stems[hit.note.id]
                overlap = max(
                    (len(mine & stems[c.note.id]) / (len(mine | stems[c.note.id]) or 1) for c in chosen), default=0.0
                )
                return lam * hit.score - (1 - lam) * overlap
            best = max(rest, key=value)
            chosen.append(best)
            rest.remove(best)
        return chosen


def format_context(hits: Sequence[SearchHit]) -> str:
    """Hits as a prompt block, best first: each memory with its time and context; a memory reached through
    the graph names the link that led to it."""
    if not hits:
        return "No relevant memories."
    by_id = {hit.note.id: hit.note for hit in hits}
    lines = ["Relevant memories (best first):"]
    for number, hit in enumerate(hits, start=1):
        note = hit.note
        when = f"[{note.event_time:%Y-%m-%d}] " if note.event_time else ""
        lines.append(f"{number}. {when}{note.content}")
        if note.context:
            lines.append(f"   context: {note.context}")
        if hit.path:
            step = hit.path[-1]
            origin = by_id.get(step.from_id)
            via = f"memory {list(by_id).index(step.from_id) + 1}" if origin else f"note {step.from_id}"
            reason = f": {step.reason}" if step.reason else ""
            lines.append(f"   linked from {via} ({step.type}{reason})")
    return "\n".join(lines)
