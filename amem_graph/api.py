"""AgenticMemory: the public entry point — add, get, update, delete, link and search notes; dialogue turns
and their context through the MemoryOS tiers (`add_turn`, `context_for`, `respond`, `tiers`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np

from .core import telemetry, timeline, validation
from .core.log import event, operation, report
from .embedding import Embedder, composite_text
from .entities.extract import default_extractor, extract, mention_rows, note_mentions
from .entities.lookup import Entities
from .errors import EvolutionConflict, InvalidInput, LLMNotConfigured, NoteNotFound
from .llm import Analyser, HeuristicAnalyser, LLMAnalyser, LLMClient
from .maintenance import schema, warmup
from .maintenance.admin import Admin
from .maintenance.retention import Retention
from .models import (
    MAX_HOPS,
    Link,
    Mention,
    Note,
    NoteChanges,
    NoteHistory,
    NoteInput,
    Page,
    Passage,
    SearchFilter,
    SearchHit,
)
from .read.network import Network
from .read.retrieval import MODES, Mode, Retriever, Tuning, format_context
from .settings import Settings
from .store import MemoryStore, StoreStats, open_store
from .store.base import NoteRevision, Tx
from .store.records import note_row, passage_rows
from .tiers import HeuristicTierAnalyser, LLMTierAnalyser, MemoryTiers, TierContext
from .write.attachments import Attachments
from .write.background import AnalysisWorker
from .write.evolution import (
    GIVEN_FIELDS,
    Evolver,
    given_fields,
    identity,
    neighbourhood_text,
    revise_if_current,
)

MAX_K = 1_000


class AgenticMemory:
    """A tenant-scoped memory of notes in Neo4j.

    >>> with AgenticMemory(tenant="alice") as memory:
    ...     note = memory.add("Alice adopted a beagle named Max in May 2023.")
    ...     hits = memory.search("What is Alice's dog called?", k=3)
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        tenant: str | None = None,
        store: MemoryStore | None = None,
        embedder: Embedder | None = None,
        analyser: Analyser | None = None,
        tuning: Tuning | None = None,
        init_schema: bool = True,
    ) -> None:
        """Without an `analyser`, an LLM analyser when one is configured (AMEM_LLM_BASE_URL or
        AMEM_LLM_API_KEY), else the offline heuristic one. A `store` passed in stays open on `close()`:
        it is the caller's (several memories may share one). `tuning` (else the settings') says how search
        ranks."""
        self.settings = settings or Settings.from_env()
        self.tenant = validation.tenant(self.settings.tenant if tenant is None else tenant)
        self.embedder = embedder or Embedder.of(self.settings)
        self._own_store = store is None  # a store passed in is the caller's to close
        self._store: MemoryStore = store or open_store(self.settings)
        try:
            if init_schema:
                schema.ensure(self._store, self.embedder.model_name, self.embedder.dimension)
            else:
                schema.check(self._store, self.embedder.model_name, self.embedder.dimension)
        except BaseException:
            if self._own_store:
                self._store.close()
            raise
        self._own_llm = LLMClient(self.settings.llm) if analyser is None and self.settings.llm.configured else None
        self.analyser: Analyser = analyser or (LLMAnalyser(self._own_llm) if self._own_llm else HeuristicAnalyser())
        self._extractor = default_extractor(self.settings.entities)
        self._evolver = Evolver(self._store, self.embedder, self.analyser, self.settings, self._extractor)
        self._retriever = Retriever(self._store, self.embedder, tuning or self.settings.tuning,
                                    assistant=self.settings.tiers.assistant)
        client = self.llm
        self.tiers = MemoryTiers(
            self._store, self.embedder, self._evolver,
            LLMTierAnalyser(client, HeuristicTierAnalyser(self.settings.tiers.continuity)) if client
            else HeuristicTierAnalyser(self.settings.tiers.continuity),
            self.settings.tiers, retriever=self._retriever, tenant=self.tenant, llm=client,
            max_chars=self.settings.max_content_chars,
        )
        self.admin = Admin(self._store, self.embedder, self.tenant)
        self.attachments = Attachments(self._store, self.embedder.dimension)
        self.entities = Entities(self._store, self.tenant, self._extractor, client, self.settings.tiers.assistant)
        self.retention = Retention(self._store, self.tenant, self.settings.tiers.heat_params())
        self.network = Network(self._store, self.tenant, self.entities)
        # Only a process that has a model to wait for analyses the queue (the offline analysis is there already).
        self._worker = AnalysisWorker(self._store, self._evolver, concurrency=self.settings.llm.concurrency,
                                      lease_s=self.settings.llm.lease_s,
                                      enabled=self.settings.llm.worker != "off" and self.analyser.kind != "heuristic")
        if self._worker.enabled:
            telemetry.watch_queue(self._store, self)  # the queue gauges, where there is a queue to watch
        if self.settings.llm.worker == "thread" and self._queues(None):
            self._worker.notify()  # what an earlier process queued and did not apply

    # -- writing ---------------------------------------------------------------------------------

    @operation("add")
    def add(
        self,
        content: str,
        *,
        tenant: str | None = None,
        source: str | None = None,
        keywords: Sequence[str] = (),
        tags: Sequence[str] = (),
        context: str = "",
        category: str | None = None,
        importance: float = 0.5,
        event_time: datetime | str | None = None,
        id: str | None = None,
        session: str | None = None,
        speaker: str | None = None,
        background: bool | None = None,
    ) -> Note:
        """Store one note: analysed (keywords, context, tags), linked to related notes, and evolving them,
        in one transaction. Adding the same content from the same source again returns the existing note.
        A note with a `session` follows the session's last note (NEXT), and the turns around it become its
        `neighbourhood`, which search reads; `speaker` defaults to the "Name" of a leading "Name: ".

        With an LLM configured, the note is stored with the offline analysis and returned at once, marked
        `analysis='pending'`; a worker applies the model's analysis later (`pending`, `wait`). `background`
        False waits for the model instead (AMEM_LLM_BACKGROUND sets the default; docs/write-path.md)."""
        item = self._checked(
            NoteInput(  # validation turns lists into tuples and refuses a bare string
                content=content, source=source, keywords=keywords, tags=tags, context=context,  # type: ignore[arg-type]
                category=category, importance=importance, event_time=event_time, id=id,  # type: ignore[arg-type]
                session=session, speaker=speaker,
            ),
            None,
        )
        tenant = self._tenant(tenant)
        queued = self._queues(background)
        outcome = self._evolver.add(tenant, item, queued=queued)
        if queued and outcome.created:
            self._worker.notify()
        note = outcome.note or self.get(outcome.note_id, tenant=tenant)
        report(created=outcome.created, evolved=len(outcome.revised), links=len(note.links), analysis=note.analysis)
        self._retriever.heard(tenant, [note.speaker] if note.speaker else [], calls=outcome.calls)
        return note

    @operation("add_many")
    def add_many(
        self,
        items: Iterable[NoteInput | str],
        *,
        tenant: str | None = None,
        batch_size: int | None = None,
        on_batch: Callable[[int], None] | None = None,
        on_invalid: Callable[[int, InvalidInput], None] | None = None,
        analyse: bool = False,
    ) -> list[str]:
        """Bulk import without analysis (`analysis='none'`; `reanalyze` can analyse them later), or with `analyse`
        queued for the worker (`analysis='pending'`, analysed in the background at AMEM_LLM_CONCURRENCY calls in
        flight, as `add` would have): every item is checked before anything is written; each batch is one
        transaction. An invalid item stops the import before anything is written, with an error that names its
        position; with `on_invalid`, it is handed to that (its position and the error) and left out, and the
        other items are stored.

        Repeats (same source and content) are not embedded again, so re-running an interrupted
        ingest resumes it. If a batch fails, the batches before it stay committed and no later one
        is written. Returns the ids of the notes stored, in input order; `on_batch(n)` is called as each
        batch of n notes is committed.
        """
        if isinstance(items, str | bytes):  # a string is a sequence too, of one-letter notes
            raise InvalidInput("add_many takes a list of notes; for one text, use add")
        if analyse:
            self._needs_llm("add_many with analyse")
        tenant = self._tenant(tenant)
        notes = validation.each(items, self._checked, on_invalid)
        size = self.settings.write_batch_size if batch_size is None else batch_size
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise InvalidInput(f"batch size must be a positive integer, got {size!r}")
        ids: list[str] = []

        def collect(write: Future[list[str]]) -> None:
            written = write.result()  # a failed batch raises here, before the next one is submitted
            ids.extend(written)
            if on_batch:
                on_batch(len(written))

        # Three stages overlap: the model embeds batch i (every core) while a thread finds its entities (one
        # core) and another writes batch i-1 (the database's work: index inserts, commit). With the extraction
        # beside the embedding rather than in the write, the import's tail is one write, not an extraction too.
        try:
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="amem-extract") as extracting, \
                    ThreadPoolExecutor(max_workers=1, thread_name_prefix="amem-write") as writer:
                pending: Future[list[str]] | None = None
                for start in range(0, len(notes), size):
                    batch = notes[start : start + size]
                    known = self.existing(batch, tenant=tenant)
                    fresh = [note for i, note in enumerate(batch) if i not in known]
                    found = extracting.submit(extract, self._extractor, fresh, assistant=self.settings.tiers.assistant)
                    vectors = self.embedder.embed([composite_text(n.content, n.context, n.keywords, n.tags) for n in fresh])
                    passages = self.embedder.passages([n.content for n in fresh])
                    if pending is not None:
                        collect(pending)
                    mentions = note_mentions(fresh, found.result())
                    pending = writer.submit(self._write, tenant, batch, known, fresh, vectors, passages, mentions,
                                            "pending" if analyse else "none")
                if pending is not None:
                    collect(pending)
        finally:  # the batches committed before a failure hold speakers too
            self._retriever.heard(tenant, {note.speaker for note in notes if note.speaker})
            if analyse and ids:
                self._worker.notify()
        return ids

    def _checked(self, item: NoteInput | str, position: int | None) -> NoteInput:
        try:
            return validation.note_input(
                NoteInput(content=item) if isinstance(item, str) else item, self.settings.max_content_chars
            )
        except InvalidInput as err:
            if position is None:
                raise
            raise InvalidInput(f"item {position}: {err}") from None

    def _write(
        self, tenant: str, batch: Sequence[NoteInput], known: dict[int, str], fresh: list[NoteInput],
        vectors: np.ndarray, passages: Sequence[Sequence[Passage]], mentions: Sequence[Sequence[Mention]],
        analysis: str,
    ) -> list[str]:
        dimension = self.embedder.dimension
        extracted = self._extractor.version if self._extractor is not None else None
        rows = [note_row(n, vector, analysis, None, dimension, passages=parts, extracted=extracted,
                         given=given_fields(n))
                for n, vector, parts in zip(fresh, vectors, passages, strict=True)]

        def work(tx: Tx) -> list[tuple[str, bool]]:
            created = tx.create_notes(rows)
            now = validation.now()
            tx.mention([
                row for (note_id, new), note, found in zip(created, fresh, mentions, strict=True) if new
                for row in mention_rows(note_id, found, note.event_time or now)
            ])
            return created

        created = iter(self._store.write(tenant, work) if rows else [])
        return [known[i] if i in known else next(created)[0] for i in range(len(batch))]

    def existing(self, notes: Sequence[NoteInput], *, tenant: str | None = None) -> dict[int, str]:
        """Positions in `notes` that the tenant already holds (same source and content), with their ids."""
        keys = [identity(note) for note in notes]
        held = self._store.read(self._tenant(tenant), lambda tx: tx.notes(keys=keys)) if keys else []
        ids = {(n.source or "", n.content_hash): n.id for n in held}
        return {i: ids[key] for i, key in enumerate(keys) if key in ids}

    @operation("get")
    def get(
        self, note_id: str, *, tenant: str | None = None, with_embedding: bool = False,
        as_of: datetime | str | None = None,
    ) -> Note:
        """One note with its links (both directions); the embedding only when asked for. With `as_of`, the note
        as the memory held it then: the fields of its version of then, the links it had then, superseded only
        if that was recorded by then (NoteNotFound if it was recorded later); the embedding is today's."""
        tenant = self._tenant(tenant)
        note_id = validation.note_id(note_id)
        at = validation.event_time(as_of, "as_of")

        def read(tx: Tx) -> Note | None:
            found = tx.notes(ids=[note_id], links=True, with_embedding=with_embedding)
            if not found or at is None:
                return found[0] if found else None
            return timeline.note_as_of(found[0], tx.history([note_id]).versions.get(note_id, ()), at)

        note = self._store.read(tenant, read)
        if note is None:
            when = "" if at is None else f" as of {at.isoformat()}"
            raise NoteNotFound(f"no note {note_id!r} in tenant {tenant!r}{when}")
        return note

    @operation("update")
    def update(
        self,
        note_id: str,
        *,
        tenant: str | None = None,
        content: str | None = None,
        keywords: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        context: str | None = None,
        category: str | None = None,
        importance: float | None = None,
        event_time: datetime | str | None = None,
        reason: str = "update",
    ) -> Note:
        """Change fields of a note; the old values are kept as a version, and the vector is recomputed."""
        tenant = self._tenant(tenant)
        changes = validation.note_changes(
            NoteChanges(
                content=content, keywords=keywords, tags=tags, context=context,  # type: ignore[arg-type]
                category=category, importance=importance, event_time=event_time, reason=reason,  # type: ignore[arg-type]
            ),
            self.settings.max_content_chars,
        )
        values: dict[str, Any] = {
            name: list(value) if isinstance(value, tuple) else value
            for name in ("content", "keywords", "tags", "context", "category", "importance", "event_time")
            if (value := getattr(changes, name)) is not None
        }
        return self._change(tenant, validation.note_id(note_id), values, changes.reason)

    def _change(self, tenant: str, note_id: str, values: dict[str, Any], reason: str) -> Note:
        """Apply `values` (None removes a field) on top of the note as it is now, re-embedding when a text
        field changes; read again and retried if an evolution changed the note in between."""
        if "content" in values:
            values = {**values, "content_hash": validation.content_hash(values["content"])}
        attempts = max(1, self.settings.evolution_attempts)
        for attempt in range(1, attempts + 1):
            current = self.get(note_id, tenant=tenant)
            if "event_time" in values:  # what the note says holds from its new event time (valid time)
                values = {**values, "valid_from": values["event_time"] or current.created_at}
            if current.analysis == "pending":  # the user's fields win over the analysis still to come
                values = {**values, "given": sorted(set(current.given) | (values.keys() & set(GIVEN_FIELDS)))}
            embedding = None
            if values.keys() & {"content", "context", "keywords", "tags"}:
                merged = {name: values.get(name, getattr(current, name)) for name in ("content", "context", "keywords", "tags")}
                embedding = self.embedder.embed_one(
                    composite_text(merged["content"], merged["context"] or "", merged["keywords"] or (), merged["tags"] or ())
                )
            dimension = self.embedder.dimension
            passages = None
            if "content" in values:  # a new text: its passages replace the old text's
                passages = passage_rows(current.id, self.embedder.passages([values["content"]])[0], dimension)
            revision = NoteRevision(
                current.id, values, reason, None if embedding is None else validation.vector(embedding, dimension),
                passages,
            )
            try:
                self._store.write(tenant, partial(revise_if_current, revision=revision, expected_version=current.version))
                break
            except EvolutionConflict:
                if attempt == attempts:
                    raise
        return self.get(note_id, tenant=tenant)

    @operation("delete")
    def delete(self, note_id: str, *, tenant: str | None = None) -> None:
        """Delete a note with its links, its versions and the evolutions it alone was part of; a fact it
        alone superseded becomes valid again. Its words leave the neighbourhoods of its session's other notes
        (and their versions), which quoted them."""
        tenant = self._tenant(tenant)
        note_id = validation.note_id(note_id)

        def erase(tx: Tx) -> list[str] | None:
            found = tx.notes(ids=[note_id])
            quoted = found[0].session if found else None  # its words, as the turns around it quote them, go too
            if not quoted:
                return tx.delete_note(note_id)
            # A neighbourhood keeps a turn's line as it read when the turn joined it: every content it had
            # goes, the longest first, so that an earlier content inside a later one takes no part of it.
            said = [found[0].content, *(v.content for v in tx.history([note_id]).versions.get(note_id, []))]
            lines = sorted({neighbourhood_text([replace(found[0], content=text)]) for text in said},
                           key=len, reverse=True)
            return tx.delete_note(note_id, erase=(quoted, tuple(lines), found[0].created_at))

        restored = self._store.write(tenant, erase)
        if restored is None:
            raise NoteNotFound(f"no note {note_id!r} in tenant {tenant!r}")
        if restored:
            event("facts_restored", logging.INFO, deleted=note_id, restored=restored)

    @operation("link")
    def link(
        self,
        source_id: str,
        target_id: str,
        type: str = "RELATES_TO",
        *,
        reason: str = "",
        confidence: float = 1.0,
        tenant: str | None = None,
    ) -> Link:
        """Link two notes of one tenant with a typed, reasoned relationship (created once, then updated)."""
        link = Link(
            source_id=validation.note_id(source_id),
            target_id=validation.note_id(target_id),
            type=validation.link_type(type),
            reason=validation.text(reason, "reason", 2_000, allow_empty=True),
            confidence=validation.unit_interval(confidence, "confidence"),
        )
        if link.source_id == link.target_id:
            raise InvalidInput("a note cannot link to itself")
        tenant = self._tenant(tenant)
        made = self._store.write(tenant, lambda tx: tx.link([link], None))
        if not made:
            raise NoteNotFound(f"cannot link {link.source_id!r} to {link.target_id!r}: both must be notes of {tenant!r}")
        return made[0]

    @operation("supersede")
    def supersede(self, older_id: str, newer_id: str, *, reason: str, tenant: str | None = None) -> Note:
        """Say that `newer_id` replaces what `older_id` said (a user's correction, or a label of the data): the
        older note is superseded from now, its valid time ends where the newer's begins, and the newer links
        to it by CONTRADICTS with `reason`, as when the analyser decides it. Returns the older note."""
        link = Link(validation.note_id(newer_id), validation.note_id(older_id), "CONTRADICTS",
                    reason=validation.text(reason, "reason", 2_000), confidence=1.0)
        if link.source_id == link.target_id:
            raise InvalidInput("a note cannot supersede itself")
        tenant = self._tenant(tenant)

        def work(tx: Tx) -> bool:
            return bool(tx.link([link], None, supersede=[(link.target_id, link.source_id, link.reason)]))

        if not self._store.write(tenant, work):
            raise NoteNotFound(f"cannot supersede {older_id!r} by {newer_id!r}: both must be notes of {tenant!r}")
        return self.get(older_id, tenant=tenant)

    # -- reading ---------------------------------------------------------------------------------

    @operation("list")
    def list(
        self, *, tenant: str | None = None, limit: int = 50, offset: int = 0, include_superseded: bool = False,
        include_archived: bool = False,
    ) -> list[Note]:
        """Notes newest first: the current ones, with `include_superseded` those a later note contradicted, and
        with `include_archived` those a retention policy archived."""
        limit, offset = validation.window(limit, offset, most=MAX_K)
        shown = SearchFilter(include_superseded=bool(include_superseded), include_archived=bool(include_archived))
        return self._store.read(self._tenant(tenant), lambda tx: tx.notes(limit=limit, offset=offset, filters=shown))

    @operation("search")
    def search(
        self,
        query: str,
        *,
        k: int = 10,
        hops: int = 2,
        mode: Mode = "hybrid",
        tenant: str | None = None,
        after: datetime | str | None = None,
        before: datetime | str | None = None,
        tags: Sequence[str] = (),
        speakers: Sequence[str] = (),
        sessions: Sequence[str] = (),
        include_superseded: bool = False,
        include_archived: bool = False,
        as_of: datetime | str | None = None,
        valid_at: datetime | str | None = None,
        count_use: bool = True,
    ) -> list[SearchHit]:
        """The k notes that best answer `query`: seeds from the vector index, the fulltext index (BM25) or
        both fused, then notes up to `hops` links or session steps away from them. Each hit says why it
        was found (index scores, the path from its seed, priors). Filters: event time in [after, before),
        any of `tags`, said by one of `speakers`, in one of `sessions`; superseded facts and archived notes (see
        `retention`) only when asked.

        `as_of` (recorded time) searches the memory as it stood then: the notes recorded by then, as they were
        then, over the links valid then; the indexes rank by what the notes say now. `valid_at` (valid time)
        keeps the notes whose facts held at that time, superseded since or not. `count_use` False leaves the hits'
        retrieval counts and last access as they are (a look, as the viewer's, rather than a recall); a search
        `as_of` never counts."""
        tenant = self._tenant(tenant)
        query = validation.text(query, "query", validation.MAX_QUERY_CHARS)
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise InvalidInput(f"k must be an integer from 1 to {MAX_K}, got {k!r}")
        if isinstance(hops, bool) or not isinstance(hops, int) or not 0 <= hops <= MAX_HOPS:
            raise InvalidInput(f"hops must be an integer from 0 to {MAX_HOPS}, got {hops!r}")
        if mode not in MODES:
            raise InvalidInput(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        filters = SearchFilter(
            after=validation.event_time(after), before=validation.event_time(before),
            tags=validation.labels(tags, "tags"), speakers=validation.labels(speakers, "speakers"),
            sessions=validation.labels(sessions, "sessions"), include_superseded=bool(include_superseded),
            include_archived=bool(include_archived), as_of=validation.event_time(as_of, "as_of"), valid_at=validation.event_time(valid_at, "valid_at"),
        )
        if filters.after and filters.before and filters.after >= filters.before:
            raise InvalidInput(
                f"after ({filters.after.isoformat()}) must be earlier than before ({filters.before.isoformat()})"
            )
        hits = self._retriever.search(tenant, query, k=k, hops=hops, mode=mode, filters=filters, count=bool(count_use))
        report(hits=len(hits), expanded=sum(1 for hit in hits if hit.path))
        return hits

    @operation("context")
    def context(self, query: str, *, k: int = 5, hops: int = 2, tenant: str | None = None, **filters: Any) -> str:
        """The notes `search` finds, as a prompt block: each memory with its time and context, and for a
        note reached through the graph, the link that led to it (A-Mem's "memory + linked memories")."""
        return format_context(self.search(query, k=k, hops=hops, tenant=tenant, **filters))

    # -- dialogue (MemoryOS tiers) ----------------------------------------------------------------

    @operation("add_turn")
    def add_turn(
        self, user_text: str, assistant_text: str = "", *, tenant: str | None = None, session_id: str = "default",
        at: datetime | str | None = None, background: bool | None = None,
    ) -> Page:
        """Store a dialogue turn as a short-term page; older pages move on to mid-term segments, and hot
        segments become notes and persona facts (see `tiers`).

        With an LLM configured, the turn returns once its page is stored (chained by the offline rule); the
        segments' summaries, promotion and persona facts follow in the background (`wait`). `background` False
        waits for the model instead (AMEM_LLM_BACKGROUND sets the default; docs/write-path.md)."""
        # A process that runs no worker thread (a one-shot CLI command) settles its turn before it returns: nothing
        # else would pick the session up before its next turn.
        later = self._queues(background) and self.settings.llm.worker == "thread"
        return self.tiers.add_turn(user_text, assistant_text, tenant=tenant, session_id=session_id, at=at,
                                   background=later)

    @operation("context_for")
    def context_for(
        self, query: str, *, tenant: str | None = None, session_id: str | None = None,
        as_of: datetime | str | None = None, **limits: int,
    ) -> TierContext:
        """Short-term pages, the best segments and their pages, persona facts and notes for `query`:
        `.prompt()` is one block with a section per tier. Limits: segments, pages, facts, notes, hops.
        `as_of` answers from the tiers as they stood then (see `tiers.context_for`)."""
        return self.tiers.context_for(query, tenant=tenant, session_id=session_id, as_of=as_of, **limits)

    @operation("respond")
    def respond(self, query: str, *, tenant: str | None = None, session_id: str = "default", remember: bool = True) -> str:
        """The configured LLM's answer to `query` over `context_for`'s block; the exchange is stored as a turn."""
        return self.tiers.respond(query, tenant=tenant, session_id=session_id, remember=remember)

    # -- history ---------------------------------------------------------------------------------

    @operation("history")
    def history(self, note_id: str, *, tenant: str | None = None, as_of: datetime | str | None = None) -> NoteHistory:
        """A note with its versions (oldest first), the evolutions it triggered or that revised it, and the
        newer notes that superseded it; with `as_of`, as they were recorded by then (the note as `get` gives it)."""
        tenant = self._tenant(tenant)
        at = validation.event_time(as_of, "as_of")
        note = self.get(note_id, tenant=tenant)
        held = self._store.read(tenant, lambda tx: tx.history([note.id], full=True))
        history = NoteHistory(note, tuple(held.versions.get(note.id, ())), tuple(held.evolutions.get(note.id, ())),
                              tuple(held.superseded.get(note.id, ())))
        then = history if at is None else timeline.history_as_of(history, at)
        if then is None:
            raise NoteNotFound(f"no note {note.id!r} in tenant {tenant!r} as of {at.isoformat()}")
        return then

    @operation("revert")
    def revert(self, note_id: str, version: int, *, tenant: str | None = None) -> Note:
        """Restore every field a note had at `version`, which analyser produced them included; the values
        it has now become a version too."""
        tenant = self._tenant(tenant)
        note_id = validation.note_id(note_id)
        if isinstance(version, bool) or not isinstance(version, int):
            raise InvalidInput(f"version must be an integer, got {version!r}")
        versions = self._store.read(tenant, lambda tx: tx.history([note_id])).versions.get(note_id, [])
        old = next((v for v in versions if v.version == version), None)
        if old is None:
            current = self.get(note_id, tenant=tenant)  # NoteNotFound if the note itself is missing
            raise InvalidInput(f"note {note_id!r} has no version {version} (it is at version {current.version})")
        values = {
            "content": old.content, "context": old.context, "keywords": list(old.keywords), "tags": list(old.tags),
            "category": old.category, "importance": old.importance, "event_time": old.event_time,
        }
        if old.analysis is not None:  # versions record their analyser since schema version 2
            values |= {"analysis": old.analysis, "model": old.model}
        return self._change(tenant, note_id, values, f"revert to version {version}")

    @operation("reanalyze")
    def reanalyze(
        self, note_ids: Sequence[str] | None = None, *, tenant: str | None = None, limit: int = 100,
        include_unanalysed: bool = False,
    ) -> list[str]:
        """Analyse again with the configured LLM: the given notes, or the oldest `limit` heuristic and
        degraded ones (and bulk-imported ones with `include_unanalysed`). Returns the ids upgraded;
        a note whose analysis degrades again keeps what it has."""
        self._needs_llm("reanalyze")
        tenant = self._tenant(tenant)
        if not 1 <= limit <= MAX_K:
            raise InvalidInput(f"limit must be 1-{MAX_K}")
        if note_ids is None:
            kinds = ["heuristic", "degraded", *(["none"] if include_unanalysed else [])]
            ids = [n.id for n in self._store.read(tenant, lambda tx: tx.notes(analyses=kinds, limit=limit))]
        else:
            ids = [self.get(i, tenant=tenant).id for i in note_ids]  # an unknown id fails before any work
        return [i for i in ids if self._evolver.reanalyze(tenant, i) is not None]

    # -- the analysis queue ----------------------------------------------------------------------

    def pending(self, *, tenant: str | None = None) -> int:
        """How many notes of the tenant wait for the model's analysis (`add` in the background, `add_many`
        with `analyse`)."""
        return int(self.queue(tenant=self._tenant(tenant))["pending"])

    def wait(self, timeout: float | None = None, *, tenant: str | None = None) -> bool:
        """Wait until no note of the tenant waits for its analysis and this process's turns added in the background
        have settled, for at most `timeout` seconds (None: as long as it takes); True when both are done. This
        process's worker (or an `amem-graph worker`) drains the queue."""
        tenant = self._tenant(tenant)
        if self.pending(tenant=tenant):
            self._worker.notify()
        return self._worker.drained(lambda: self.tiers.settling() == 0 and self.pending(tenant=tenant) == 0, timeout)

    def work(self, *, until_empty: bool = False, on_done: Callable[[], None] | None = None) -> dict[str, int]:
        """Analyse the queue of every tenant in this thread, as `amem-graph worker` does: until it is empty with
        `until_empty`, else until `close()` (from another thread) or an interrupt; `on_done()` after each analysis.
        Returns the counts of what it did: applied, skipped (gone or analysed already), failed."""
        self._needs_llm("the analysis worker")
        return self._worker.run(lambda: until_empty and self._store.analysis_queue()[0] == 0, on_done)

    def _needs_llm(self, what: str) -> None:
        if self.analyser.kind == HeuristicAnalyser.kind:
            raise LLMNotConfigured(
                f"{what} needs an LLM: set AMEM_LLM_BASE_URL (any OpenAI-compatible server) or AMEM_LLM_API_KEY"
            )

    def _queues(self, background: bool | None) -> bool:
        """Whether an add waits for no analyser but the offline one: only when there is another to wait for."""
        if self.analyser.kind == HeuristicAnalyser.kind:
            return False
        return self.settings.llm.background if background is None else bool(background)

    def warm_up(self, seconds: float = warmup.WARM_UP_S) -> warmup.WarmUp:
        """Run the hot path (adds, a bulk batch, searches, a turn through the tiers) over a scratch tenant for
        about `seconds`, then delete it, so that the calls after it run at steady-state speed on a server that has
        just started: `amem-graph neo4j start` and `init` call it. Its notes are analysed offline, never by the
        configured LLM."""
        scratch = AgenticMemory(self.settings, tenant=warmup.scratch_tenant(), store=self._store,
                                embedder=self.embedder, analyser=HeuristicAnalyser(), init_schema=False)
        with scratch:
            return warmup.run(scratch, seconds)

    def stats(self, *, tenant: str | None = None) -> StoreStats:
        """Counts from the store, the analysis queue (notes pending, how long the oldest has waited, what this
        process's worker did), and this process's LLM calls and tokens per operation."""
        stats = self._store.stats(None if tenant is None else validation.tenant(tenant))
        queue = {**self.queue(tenant=tenant), "worker": dict(self._worker.counts) if self._worker.started else {},
                 "settling": self.tiers.settling()}
        return replace(stats, llm=self.llm.usage() if self.llm else {}, queue=queue)

    def queue(self, *, tenant: str | None = None) -> dict[str, float]:
        """The analysis queue of one tenant (None: of every tenant): `pending` notes, and `lag_s`, how long the
        oldest of them has waited."""
        pending, oldest = self._store.analysis_queue(None if tenant is None else validation.tenant(tenant))
        lag = (validation.now() - oldest).total_seconds() if oldest is not None else 0.0
        return {"pending": pending, "lag_s": round(max(0.0, lag), 3)}

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def llm(self) -> LLMClient | None:
        """The LLM client analysis goes through, if any (its `usage()` counts calls and tokens)."""
        return self.analyser.client if isinstance(self.analyser, LLMAnalyser) else None

    def _tenant(self, tenant: str | None) -> str:
        return self.tenant if tenant is None else validation.tenant(tenant)

    def close(self) -> None:
        """Finish or hand over the analyses in flight (within AnalysisWorker.CLOSE_S), then release everything."""
        self._worker.close()
        self.tiers.close()
        self._retriever.close()
        self._evolver.close()
        if self._own_llm is not None:
            self._own_llm.close()
        if self._own_store:
            self._store.close()

    def __enter__(self) -> AgenticMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

