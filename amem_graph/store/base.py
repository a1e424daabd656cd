"""The store contract: what every backend (Neo4j now, embedded later) must do, in domain terms."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, TypeVar

import numpy as np

from ..errors import SchemaMismatch
from ..models import (
    Attached,
    Attachment,
    AttachmentKind,
    Entity,
    EntityMerge,
    Evolution,
    Fact,
    Link,
    MergeBy,
    Note,
    NoteVersion,
    Page,
    RetentionPolicy,
    SearchFilter,
    Segment,
    Step,
    Supersession,
)
from .bm25 import Statistics

SCHEMA_VERSION = 12  # 2: tenant locks, Evolution nodes; 3: sessions, speakers, neighbourhood; 4: MemoryOS tiers;
# 5: store keys (the LangGraph store); 6: entities; 7: passages, the names speakers are called by; 8: link periods,
# the end of a note's valid time, archived notes, retention policies; 9: each tenant's BM25 statistics (Neo4j: Term,
# Corpus); 10: a neighbourhood keeps no versions (store/upgrade.py); 11: the analysis queue (pending notes by their
# analysis, on Neo4j an index and a lock node); 12: a tenant's store keys by tenant (Neo4j: Note(tenant, store_key))


@dataclass(frozen=True)
class StoreStats:
    store: str
    location: str
    labels: dict[str, int]
    relationships: dict[str, int]
    indexes: list[dict[str, Any]] = field(default_factory=list)
    schema: dict[str, Any] = field(default_factory=dict)
    evolutions: dict[str, dict[str, int]] = field(default_factory=dict)  # per analyser: adds + reanalyses, tokens
    llm: dict[str, dict[str, float]] = field(default_factory=dict)  # this process, per operation: calls, tokens...
    server: dict[str, Any] = field(default_factory=dict)  # Neo4j: its release, and how k-NN filters by tenant
    queue: dict[str, Any] = field(default_factory=dict)  # the analysis queue: pending notes, the oldest's wait (s)


@dataclass(frozen=True)
class History:
    """What `history` read: each note's kept versions (notes that have any); with `full`, the evolutions each
    triggered or that revised it and the newer notes that superseded it; with `attachments`, the objects its
    attachment held before its current one, with when each was set ('' for one put again unchanged; see
    cypher/attached/set.cypher). Oldest first; notes with none left out."""

    versions: dict[str, list[NoteVersion]]
    evolutions: dict[str, list[Evolution]] = field(default_factory=dict)
    superseded: dict[str, list[Supersession]] = field(default_factory=dict)
    attached: dict[str, list[tuple[str, datetime]]] = field(default_factory=dict)


@dataclass(frozen=True)
class NoteRevision:
    """New values for an existing note; the note as it was becomes a NoteVersion carrying `reason`. A None
    value removes the property; `embedding` None keeps the vector. A revision that is not `versioned` changes
    derived data only (the neighbourhood, as later turns of its session arrive; the state of its analysis): no
    version is kept, the note's version and update time stay, and, when it changes the neighbourhood, the time it
    was written joins the note's `neighbourhood_after` (what as-of reads cut the text by)."""

    id: str
    values: Mapping[str, Any]
    reason: str
    embedding: Sequence[float] | None = None
    passages: Sequence[Mapping[str, Any]] | None = None  # records.passage_rows for a new content; None keeps them
    versioned: bool = True


@dataclass(frozen=True)
class EvolutionRecord:
    """The Evolution node of one analysed add or reanalysis, tied to its trigger and the versions it wrote."""

    id: str
    trigger_id: str
    analysis: str
    model: str | None
    prompt_version: str | None
    decision: str  # JSON
    prompt_tokens: int
    completion_tokens: int
    revised: tuple[tuple[str, int], ...] = ()  # (note id, version kept): `revise` fills it in


@dataclass(frozen=True)
class NoteUsage:
    """What a retention policy weighs of one note not archived."""

    id: str
    created_at: datetime | None
    last_accessed: datetime | None
    recalls: int  # retrieval_count
    links: int  # valid links, either direction


EVERY = 2**62  # the default limit: every row

Counted = Literal["Note", "Segment", "Fact"]  # what `update` counts uses of (it sets properties of the last two)


class NoteTx(Protocol):
    """Data primitives over one tenant's notes, run inside one transaction (`Store.read` / `Store.write`).
    They read and write what they are given; the rules (versions, budgets, contradictions) are the caller's."""

    tenant: str

    def create_notes(self, rows: Sequence[dict[str, Any]]) -> list[tuple[str, bool]]:
        """Notes from `records.note_row` rows, a session's notes chained in order (NEXT, seq); a row whose
        identity a note holds already creates nothing. Returns (id, created) per row."""

    def notes(
        self, *, ids: Sequence[str] | None = None, keys: Sequence[tuple[str, str]] | None = None,
        session: str | None = None, analyses: Sequence[str] | None = None, limit: int = EVERY, offset: int = 0,
        links: bool = False, with_embedding: bool = False, filters: SearchFilter | None = None,
    ) -> list[Note]:
        """Notes by one selector (an empty one selects nothing): `ids`, those that exist in the order asked,
        with their links to and from other notes (valid or not) if `links` and their vectors if
        `with_embedding`; `keys` ((source, content hash), source '' for none), the notes holding these
        identities; a `session`'s last `limit`, oldest first; valid notes whose analysis is one of `analyses`,
        oldest first; or with none, newest first: those `filters` admits (cypher/fragments/note_filter.cypher),
        every note without one (superseded and archived ones too)."""

    def revise(self, revisions: Sequence[NoteRevision], evolution: EvolutionRecord | None) -> list[tuple[str, int]]:
        """Apply each revision, keeping the note as it was as a NoteVersion (a `versioned` one); returns (id, version
        kept) of those. With
        `evolution`, its Evolution node is then recorded: TRIGGERED_BY its trigger, REVISED the versions kept here
        (nothing if the trigger is missing)."""

    def delete_note(
        self, note_id: str, *, erase: tuple[str, tuple[str, ...], datetime | None] | None = None,
    ) -> list[str] | None:
        """Delete a note with its links, its versions and the evolutions it triggered that revised no other
        note, closing its session chain; facts it alone superseded become valid again (their ids are
        returned). None if there is no such note. With `erase` (session, lines, when the note was recorded),
        each line is then taken out of the neighbourhood text of the session's notes and of their versions, in
        place (with the line break that joined it), where it appears, and the time out of their
        `neighbourhood_after`."""

    def link(
        self, links: Sequence[Link], evolution_id: str | None, *, invalidate: str | None = None,
        supersede: Sequence[tuple[str, str, str]] = (),
    ) -> list[Link]:
        """Each link between two notes of the tenant, created once and then updated (and valid again); returns
        them as written. Then each of `supersede` (older id, newer id, reason: what a contradiction decided): the
        older note is invalidated and points at the newer one (SUPERSEDED_BY; its valid time ends where the
        newer's begins). With `invalidate` (a reason), each valid link given (by source, target and type) is
        invalid from now instead of written, never deleted, and none is returned (`supersede` still applies)."""

    def archive(self, note_ids: Sequence[str], archive: bool = True) -> list[str]:
        """Archive these notes (or with `archive` False, restore them), stamped now: only their `archived_at` and
        `archived_periods` change. Returns the ids that changed state."""

    def usage(self) -> list[NoteUsage]:
        """The usage of every note not archived (superseded ones too), by id."""

    def retention(self, policy: RetentionPolicy | None = None) -> RetentionPolicy | None:
        """The tenant's retention policy, if one is set; with `policy`, that one set first (one with no rule
        clears it)."""

    def history(self, note_ids: Sequence[str], *, full: bool = False, attachments: bool = False) -> History:
        """The kept versions of these notes; with `full`, their evolutions and supersessions too; with
        `attachments`, their attachments' earlier objects (`History`)."""

    def schema_marker(self) -> dict[str, Any]:
        """The database's schema marker as this transaction reads it (model, dimension, a consolidation under way),
        for `vectors_current`."""

    def search(
        self, k: int, *, vector: Sequence[float] | None = None, text: str | None = None, passages: bool = False,
        filters: SearchFilter = ..., fields: Mapping[str, float] | None = None, brief: bool = False,
    ) -> list[tuple[Note, float, tuple[int, int] | None]]:
        """The k best notes that pass the filter by one channel, best first, with their scores: by `text` (which wins
        over `vector` when both are given), BM25 over the note text fields (or only `fields`, with those boosts),
        the query's words only; by `vector`, cosine (scaled to 0..1) to each note's own vector, or with `passages`,
        the long notes with the nearest passages, each once, with that passage's span in its content (the span is
        None otherwise). `brief` notes carry only id, content, speaker, session and event time: enough to rank,
        cheap to send."""

    def expand(
        self, candidates: Mapping[str, float], seeds: Sequence[str], *, hops: int, decay: float,
        weights: Mapping[str, float], limit: int, names: Sequence[str] = (), speaker_prior: float = 0.0,
        deep_seeds: int = 5, filters: SearchFilter = ...,
    ) -> list[tuple[Note, float, list[Step]]]:
        """The best `limit` of the candidates (id → score) and the notes up to `hops` valid links or session
        steps from the `seeds` (some candidates), as full notes with score and path (empty for a
        candidate). A path scores its seed × per step (decay × type weight × confidence), plus
        `speaker_prior` for a note by one of `names`. Only the first `deep_seeds` seeds go past one hop.
        One statement on Neo4j: search's hot path saves its round trips."""

    def statistics(self, index: str) -> Statistics:
        """The tenant's ranking statistics of one fulltext index ("note_text" or "page_text") as the store keeps
        them for search (Corpus and Term nodes on Neo4j, postings on the embedded store), in full: what `check`
        recounts from the texts."""

    def placed(self, filters: SearchFilter) -> list[Placed]:
        """Where each note `filters` admits lies in time, and the keys of the entities it mentions (their own,
        aliases unresolved), without its texts: what places a whole memory along its time. In no order."""

    def speakers(self, *, calls: bool = False) -> tuple[list[str], list[tuple[str, str, int]]]:
        """The speakers of the tenant's notes, and with `calls`, (speaker, name, times): how often the notes call
        each speaker by each name (their `addressee` and `called`)."""

    def update(self, label: Counted, changes: Sequence[tuple[str, Mapping[str, Any]]] = (), *,
               used: Sequence[str] = (), now: datetime | None = None) -> None:
        """Set properties of segments or facts ((id, values) each; None removes one; a note changes only through
        `revise`, so `changes` of notes are refused). With `used`, one more use
        of each node per time its id is listed there, stamped `now`: a note's retrieval, a segment's visit, a
        fact's use. Changes no version."""


T = TypeVar("T")


@dataclass(frozen=True)
class SchemaState:
    """What a database says about the schema it was built with (None: not recorded)."""

    version: int | None
    model: str | None
    dimension: int | None  # the schema marker's
    index_dimension: int | None  # the note vector index's (None: no index)
    consolidating: str | None = None  # a consolidation under way: how far it got ("kind:last id"), else None


@dataclass(frozen=True)
class SchemaWrite:
    """The schema `schema(create=...)` makes: for this embedding model and dimension, from the version found."""

    model: str
    dimension: int
    found: int | None


def vectors_current(marker: Mapping[str, Any] | None, model: str | None) -> bool:
    """Whether an engine opened for `model` (canonical; None: not opened by an engine) shares the database's
    vectors: no consolidation under way, and the database's model is still the engine's."""
    marker = marker or {}
    return not marker.get("consolidating") and (model is None or marker.get("embedding_model") in (None, model))


def refuse_stale_writer(marker: Mapping[str, Any] | None, model: str | None, location: str) -> None:
    """Inside a write transaction, after the tenant's lock: an engine whose vectors no longer fit the database
    writes nothing (a consolidation started or ended since it opened), so no note keeps another model's vector."""
    refuse_stale_vectors(marker, model, location, "nothing was written: write again once it is done, with a memory "
                         "opened for that model", "nothing was written: open a memory with")


def refuse_stale_vectors(marker: Mapping[str, Any] | None, model: str | None, location: str, moving: str, moved: str
                         ) -> None:
    """A typed error, saying `moving` (a consolidation under way) or `moved` (it ended after the engine opened;
    followed by the setting that names the new model), when an engine opened for `model` does not share the
    database's vectors."""
    if model is None or vectors_current(marker, model):
        return
    marker = marker or {}
    new = marker.get("embedding_model")
    raise SchemaMismatch(
        f"{location} is being moved to the embedding model {new!r} (`amem-graph consolidate`); {moving}"
        if marker.get("consolidating") else
        f"{location} was moved to the embedding model {new!r} after this memory opened with {model!r}; "
        f"{moved} AMEM_EMBEDDING_MODEL={new}"
    )


class NoteStore(Protocol):
    """Tenant-scoped persistence of notes and links: primitives run inside a transaction the caller opens.
    Vectors come in computed; the store never embeds."""

    kind: str
    location: str
    dimension: int | None  # what the schema was checked for (`schema.check`); None before
    model: str | None  # the embedding model the schema was checked for (canonical); None before

    def read(self, tenant: str, work: Callable[[Tx], T]) -> T:
        """`work` in one read transaction (on Neo4j, retried on transient errors)."""

    def write(self, tenant: str, work: Callable[[Tx], T], *, lock: bool = True) -> T:
        """`work` in one write transaction, all or nothing, after the tenant's lock (unless `lock` is False:
        writes that change no version); on Neo4j retried on transient errors, so `work` may run again."""

    def schema(self, *, create: SchemaWrite | None = None) -> SchemaState:
        """What the database says about the schema it was built with. With `create`, first create what is
        missing (idempotent), migrating from the schema version it found, and mark the database as its model's; a
        vector index of another dimension is replaced (a consolidation: the caller decided)."""

    def delete_tenant(self, tenant: str) -> int:
        """Delete every node of one tenant; returns how many."""

    def claim_analyses(
        self, worker: str, limit: int, lease_s: float, *, release: Sequence[str] = (),
    ) -> list[tuple[str, str]]:
        """The analysis queue, across tenants: first the claims `worker` holds on the notes `release` names are
        dropped; then up to `limit` notes whose analysis is pending and that no live claim holds are claimed by
        `worker` for `lease_s` seconds, fairly — a tenant with fewer live claims first, then each tenant's oldest
        notes — and returned as (tenant, note id). Claimers take turns, so a note is claimed by one at a time; a
        claim expires at its lease's end (on the embedded store, with the process that holds the store)."""

    def analysis_queue(self, tenant: str | None = None) -> tuple[int, datetime | None]:
        """How many notes (of one tenant, or every one) wait for their analysis, and when the oldest was stored."""

    def stats(self, tenant: str | None = None) -> StoreStats: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class PageWrite:
    """A new page and the dialogue chain it joins (the previous page's, or a new one)."""

    id: str
    session_id: str
    user_text: str
    assistant_text: str
    at: Any  # datetime, millisecond precision
    keywords: tuple[str, ...]
    embedding: np.ndarray
    chain_id: str
    chain_summary: str
    chain_keywords: tuple[str, ...]
    analysis: str
    model: str | None
    neighbourhood: str  # the turns before it and itself, stamps dropped
    turn: str  # its own text as the pages before it add it to their neighbourhood


@dataclass(frozen=True)
class SessionPages:
    """A session's pages: how many, how many still short-term, and when its newest was stored."""

    session_id: str
    pages: int
    stm: int
    latest: datetime | None


@dataclass(frozen=True)
class SegmentWrite:
    """A segment's new summary, keywords and centroid after a page joins (a new segment when `expected_pages`
    is None)."""

    id: str
    summary: str
    keywords: tuple[str, ...]
    keyword_counts: tuple[int, ...]
    embedding: np.ndarray
    expected_pages: int | None
    analysis: str
    model: str | None


@dataclass(frozen=True)
class FactWrite:
    """A persona fact to create (`existing_id` None) or to reinforce; `supersedes` names the older fact a
    new one replaces."""

    kind: str
    text: str
    page_id: str
    confidence: float
    embedding: np.ndarray | None
    id: str | None = None
    existing_id: str | None = None
    supersedes: str | None = None
    reason: str = ""
    assistant: str | None = None
    analysis: str = "heuristic"
    model: str | None = None


class TierTx(Protocol):
    """Data primitives over one tenant's MemoryOS tiers (pages, chains, segments, persona facts), inside the
    transaction of `Store.read` / `Store.write`. `now` comes from the caller's clock, so heat can be read at
    any time (and tests can move time on); what heat is, and what to archive, join or promote, the tiers decide."""

    def add_page(self, page: PageWrite, now: datetime) -> int:
        """Append a page to its session and chain; returns its seq."""

    def pages(
        self, *, session: str | None = None, stm: bool = False, segment: str | None = None, unpromoted: bool = False,
        around: Sequence[str] | None = None, width: int = 2, limit: int = EVERY, offset: int = 0, with_embedding: bool = False,
        as_of: datetime | None = None,
    ) -> list[Page]:
        """Pages by one selector (an empty one selects nothing), each with its chain and segment: a `session`'s last `limit` (only short-term
        ones with `stm`), oldest first; a `segment`'s (only those not promoted yet with `unpromoted`) by
        session and seq; the pages up to `width` before and after each of `around` in its session (each page
        once, by session and seq); or with none, every page by session and seq (`limit` after `offset`).
        `with_embedding` fills each page's vector. With `as_of` (a session's or a segment's only), the pages
        recorded by then (`timeline.tier_held`), short-term then with `stm` (`timeline.short_term_at`), and a
        segment's pages that had joined it by then; the pages are as stored (`timeline.page_as_of` is the engine's)."""

    def sessions(self, as_of: datetime | None = None) -> list[SessionPages]:
        """Each session's pages, short-term ones and newest page's time; with `as_of`, among the pages recorded by then."""

    def page_search(
        self, k: int, *, text: str | None = None, fields: Mapping[str, float] | None = None,
        vector: Sequence[float] | None = None, segments: Sequence[str] | None = None, as_of: datetime | None = None,
    ) -> list[tuple[Page, float]]:
        """The tenant's best `k` pages by BM25 over `text` (the query's words only; in all text fields, or in
        `fields` with those boosts) or by cosine to `vector`; with `segments` (and a vector), the best `k`
        pages of each of those segments. With `as_of`, only pages recorded by then (of a segment: joined by then)."""

    def segments(
        self, *, ids: Sequence[str] | None = None, vector: Sequence[float] | None = None, limit: int | None = None,
        include_archived: bool = False, with_embedding: bool = False, as_of: datetime | None = None,
    ) -> list[tuple[Segment, float | None]]:
        """Segments (only `ids` if given; heat 0: the tiers compute it) with their cosine to `vector`, then
        ranked by it. `with_embedding` fills each segment's centroid. With `as_of`, the segments held then
        (`timeline.tier_held`), archived since or not, instead of today's active ones."""

    def write_segment(
        self, segment_id: str, now: datetime, *, joined: tuple[str, SegmentWrite] | None = None,
        derived: Sequence[tuple[str, str]] = (), facts: Sequence[FactWrite] = (),
    ) -> None:
        """What the tiers write of a segment, in this order. A page `joined` it ((page id, the segment as it is now,
        whose id is the one used), new or existing): its summary, keywords and centroid, one more page. The
        persona `facts` of a promotion: reinforced (one more mention, the confidence given), then the new ones
        created, invalidating those they supersede (which still apply, the tiers decide:
        `persona.still_applying`). The notes a promotion `derived`: DERIVED_FROM from each (page id, note id)'s
        note to its page and the segment, the pages marked promoted."""

    def facts(
        self, assistant: str | None, *, kinds: Sequence[str] | None = None, vector: Sequence[float] | None = None,
        limit: int = 10_000, with_embedding: bool = False, as_of: datetime | None = None,
    ) -> list[tuple[Fact, float | None, np.ndarray | None]]:
        """Active facts (of `assistant`'s scope, or all with None; with cosine to `vector` if given, ranked by
        it) and their embeddings if asked; with `as_of`, the facts active then (`timeline.tier_held`)."""



@dataclass(frozen=True)
class MentionWrite:
    """A note mentions an entity, resolved by the caller to its `key`; `seen` is when (the note's event time,
    else now). With `sure`, the mention's kind replaces the entity's (a speaker is a person)."""

    note_id: str
    key: str
    name: str
    kind: str
    confidence: float
    seen: datetime
    sure: bool = False


MAX_ALIASES = 20  # names an entity keeps beside its own


@dataclass(frozen=True)
class Placed:
    """A note as `placed` reads it: its session and place in it, when it was said and recorded, last changed,
    superseded and archived, and the entities it mentions."""

    id: str
    session: str | None
    seq: int | None
    event_time: datetime | None
    created_at: datetime
    updated_at: datetime | None
    invalid_at: datetime | None
    archived_periods: tuple[datetime, ...]
    entities: tuple[str, ...]


@dataclass(frozen=True)
class MentionRow:
    """A note mentions an entity (by the entity's own key) with a confidence, recorded at `at` (a mention written
    before mentions kept their time: when its note was); `entity` as the store holds it, when asked for."""

    note_id: str
    key: str
    at: datetime
    confidence: float = 1.0
    entity: Entity | None = None


class EntityTx(Protocol):
    """Data primitives over one tenant's entities and the notes that mention them, inside a transaction."""

    def mention(
        self, mentions: Sequence[MentionWrite], *, replace: Sequence[str] = (), extracted: str | None = None,
    ) -> None:
        """Each note mentions its entity once (MENTIONS, the highest confidence given, and when it was recorded).
        An entity is created on its first mention with that name and kind (a `sure` mention sets the kind again);
        `mentions` counts the notes that mention it; another name joins its aliases (at most MAX_ALIASES); first
        and last seen span the mentions' times. The notes `replace` first lose the mentions they had (an entity
        no note mentions then goes, unless it takes part in a merge), and then record `extracted`, the extractor
        that found these."""

    def entities(
        self, *, keys: Sequence[str] | None = None, limit: int = EVERY, offset: int = 0, least_topic_mentions: int = 0,
    ) -> list[Entity]:
        """The entities of `keys` that exist, in the order asked (an empty list selects nothing); or with none,
        every entity some note mentions, the most mentioned first, a topic only if at least `least_topic_mentions`
        notes mention it."""

    def mentioning(self, keys: Sequence[str], limit: int, *, filters: SearchFilter = ...) -> list[tuple[Entity, Note, float]]:
        """For each entity of `keys`, taken as the entity it was merged into if it was (each such entity once),
        the newest `limit` notes that mention it or an entity merged into it and pass the filter, as brief
        notes (see `search`), with the mention's best confidence."""

    def alias(self, key: str, into: str | None, *, reason: str = "", by: MergeBy = "user") -> str | None:
        """Merge the entity `key` into `into` (ALIAS_OF with the time, reason and decider; the caller has checked
        that both exist and that merges stay one level deep): `into`, or None if either is missing. With `into`
        None, undo the merge of `key`, keeping it as ended now (WAS_ALIAS_OF): the key of the entity it was merged
        into, or None if it was not."""

    def merges(self, into: str | None = None) -> list[EntityMerge]:
        """The merges into the entity `into` that hold now; with None, every merge of the tenant's entities, held
        or ended (`ended_at`). Oldest first."""

    def mentions(
        self, *, keys: Sequence[str] | None = None, note_ids: Sequence[str] | None = None
    ) -> list[MentionRow]:
        """The mentions of the entities `keys` (by their own keys); or of the notes `note_ids`, each with its
        entity, by note id, then the entity's mentions and key; or with neither, every mention of the tenant."""


@dataclass(frozen=True)
class Near:
    """`attached`'s selector of the notes of an adapter's `kind` nearest `vector` by exact cosine: by their
    external vectors (`external`, same dimension) or by the engine's (then with `plain`, notes no adapter owns
    too)."""

    kind: AttachmentKind
    vector: Sequence[float]
    external: bool
    plain: bool = False


class AttachmentTx(Protocol):
    """What the LangChain / LangGraph adapters keep on one tenant's notes, inside a transaction."""

    def attach(self, kind: AttachmentKind, attachments: Sequence[Attachment], now: datetime) -> list[str]:
        """Set each note's attachment (the caller has checked that no other adapter owns it); returns the ids of
        the notes that exist, which are the ones set."""

    def attached(
        self, *, ids: Sequence[str] | None = None, session: str | None = None, keyed: bool = False,
        near: Near | None = None, limit: int = EVERY, offset: int = 0, superseded: bool = True,
        as_of: datetime | None = None,
    ) -> list[Attached]:
        """By one selector (none, or an empty one, selects nothing; `limit` after `offset` for each): the notes
        among `ids` that carry an attachment (of any adapter), in the order asked; every note of a `session` in
        session order, with its attachment if it has one (kind None if not); with `keyed`, store items, the most
        recently put first; or the `limit` notes `near` a vector, nearest first, with their scores (cosine scaled
        to 0..1). `keyed` and `near` take notes a later one contradicted only with `superseded`, archived ones
        never; with `as_of`, the notes held then, owned, superseded and archived as of then
        (cypher/fragments/attached_by_then.cypher, note_filter.cypher). Every reader returns what the note holds
        now, which the engine turns into what it held then (timeline)."""


class AdminStore(Protocol):
    """Whole-tenant and whole-database work: export / import (the same records from either store, so a
    tenant moves between them unchanged) and re-embedding after a model change."""

    def export_records(self, tenant: str, page: int = 2_000) -> Iterator[dict[str, Any]]:
        """Every node, then every relationship, of one tenant, as JSON-ready records (see ingest/transfer.py)."""

    def tenants(self, *, keyed: bool = False, prefix: str = "", as_of: datetime | None = None,
                of_notes: Sequence[str] | None = None) -> list[str]:
        """Every tenant that holds a node, in order; with `keyed`, every tenant whose name starts with `prefix`
        and holds a store item (with `as_of`, that held one then); with `of_notes`, the tenant that holds each of
        these note ids, in their order ('' for an id no tenant holds; ids are unique across the database)."""

    def import_records(
        self, tenant: str, rows: Sequence[dict[str, Any]], relationships: Sequence[dict[str, Any]], batch: int = 1_000
    ) -> tuple[int, int]:
        """Create an exported tenant all or nothing from `transfer.node_rows` and the export's relationships
        (into a tenant that holds nothing: the caller checks)."""

    def embedding_texts(self, kind: str, after: str, limit: int) -> list[dict[str, Any]]:
        """A page of notes, pages, facts or segments (every tenant), by id, with what their vectors come from
        (for a segment, its pages' vectors)."""

    def write_embeddings(self, kind: str, rows: Sequence[tuple[str, list[float]]], reached: str | None) -> None:
        """Each (id, vector), and in the same transaction the schema marker's `consolidating` set to `reached`
        (None: the consolidation is over): the caller has checked the vectors' dimension."""


class Tx(NoteTx, TierTx, AttachmentTx, EntityTx, Protocol):
    """Everything a transaction of one tenant offers."""


class MemoryStore(NoteStore, AdminStore, Protocol):
    """What the engine runs on: notes, the MemoryOS tiers, adapters' attachments and admin work, in one
    database."""
