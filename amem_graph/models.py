"""The domain: notes (A-Mem's atomic memories) and the typed links between them."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import datetime
from typing import Any, Literal, NamedTuple

MAX_HOPS = 3  # the longest expansion path search follows

# The closed link vocabulary. Relationship types reach Cypher only after a check against this set.
LINK_TYPES: frozenset[str] = frozenset(
    {"RELATES_TO", "ELABORATES", "SUPPORTS", "CONTRADICTS", "FOLLOWS", "SAME_ENTITY"}
)

# Which analyser produced a note's derived fields: none (bulk import), heuristic (offline), llm, or
# degraded (the LLM failed, so the heuristic analyser stood in; `reanalyze` upgrades these later); pending: the
# note is queued for the model's analysis (what it holds until then is the offline one, or none after a bulk import).
AnalysisKind = Literal["none", "heuristic", "llm", "degraded", "pending"]


@dataclass(frozen=True)
class Link:
    """A typed, reasoned link between two notes; one relationship, read from either end."""

    source_id: str
    target_id: str
    type: str
    reason: str = ""
    confidence: float = 1.0
    created_at: datetime | None = None
    invalid_at: datetime | None = None
    # When it was valid (recorded time): valid from the first bound, invalid from the second, valid again from the
    # third... A link that was invalidated and made again keeps every period.
    periods: tuple[datetime, ...] = ()

    def other(self, note_id: str) -> str:
        return self.target_id if note_id == self.source_id else self.source_id

    def valid_at(self, at: datetime) -> bool:
        return in_periods(self.periods, at)


def in_periods(bounds: Collection[datetime], at: datetime) -> bool:
    """Whether `at` lies in one of the periods these bounds make (valid from the first, invalid from the second,
    valid again from the third...): an odd number of them lie at or before it."""
    return sum(1 for bound in bounds if bound <= at) % 2 == 1


@dataclass(frozen=True)
class NoteInput:
    """What a caller supplies for a new note; the engine fills ids, hashes, times and the embedding."""

    content: str
    source: str | None = None
    keywords: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    context: str = ""
    category: str | None = None
    importance: float = 0.5
    event_time: datetime | None = None
    id: str | None = None
    session: str | None = None  # a dialogue or episode: notes of one session are chained by NEXT in add order
    speaker: str | None = None  # who said it; by default the "Name" of a leading "Name: " in the content


@dataclass(frozen=True)
class NoteChanges:
    """Fields an update may change; None leaves a field as it is."""

    content: str | None = None
    keywords: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None
    context: str | None = None
    category: str | None = None
    importance: float | None = None
    event_time: datetime | None = None
    reason: str = "update"

    def is_empty(self) -> bool:
        return all(getattr(self, f.name) is None for f in fields(self) if f.name != "reason")


class Passage(NamedTuple):
    """A part of a long note's content (characters start to end) with its own vector: the embedding model reads
    only a text's first window, so the rest of a long note is found through its passages."""

    start: int
    end: int
    vector: Any  # a numpy vector


@dataclass(frozen=True)
class Note:
    """One memory: what was said (`content`, never rewritten by the engine) plus what was derived."""

    id: str
    tenant: str
    content: str
    content_hash: str
    source: str | None = None
    keywords: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    context: str = ""
    category: str | None = None
    importance: float = 0.5
    retrieval_count: int = 0
    event_time: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    last_accessed: datetime | None = None
    version: int = 1
    valid_from: datetime | None = None  # valid time: when what it says began to hold (its event time, else created_at)
    valid_to: datetime | None = None  # valid time: when it stopped holding (the valid_from of the note that superseded it)
    invalid_at: datetime | None = None  # recorded time: when a later note superseded it
    archived_at: datetime | None = None  # when a retention policy archived it (out of search until restored)
    archived_periods: tuple[datetime, ...] = ()  # bounds of the periods it was archived (see in_periods)
    analysis: AnalysisKind = "none"
    model: str | None = None
    session: str | None = None
    seq: int | None = None  # position in its session, from 1
    speaker: str | None = None  # from a leading "Name: " in the content
    neighbourhood: str = ""  # the turns around it in its session (itself included), kept current as turns arrive
    # When each turn after it joined `neighbourhood` (derived text keeps no versions): as-of reads cut it back.
    neighbourhood_after: tuple[datetime, ...] = field(default=(), repr=False)
    extracted: str | None = field(default=None, repr=False)  # the entity extractor that read it (its `version`)
    # The derived fields a caller set (at add, or by an update while the analysis was pending): the late analysis
    # leaves them as they are.
    given: tuple[str, ...] = field(default=(), repr=False)
    links: tuple[Link, ...] = ()
    embedding: tuple[float, ...] | None = field(default=None, repr=False)

    def to_dict(self, *, with_embedding: bool = False) -> dict[str, Any]:
        """JSON-ready form (ISO times, links as dicts)."""
        hidden = ("neighbourhood_after", "extracted", "given")
        return _fields(self, skip=hidden if with_embedding else ("embedding", *hidden))


@dataclass(frozen=True)
class SearchFilter:
    """What a search may return; empty fields do not filter. Applied to seeds and expanded notes alike.

    `as_of` (recorded time) leaves out the notes recorded after it and counts only the supersessions recorded by
    then; `valid_at` (valid time) keeps the notes that held at that time, superseded since or not."""

    after: datetime | None = None  # event time at or after
    before: datetime | None = None  # event time before
    tags: tuple[str, ...] = ()  # any of these tags
    speakers: tuple[str, ...] = ()  # said by one of these
    sessions: tuple[str, ...] = ()
    include_superseded: bool = False  # notes a CONTRADICTS decision invalidated
    include_archived: bool = False  # notes a retention policy archived
    as_of: datetime | None = None
    valid_at: datetime | None = None

    def params(self) -> dict[str, Any]:
        """The statement parameters of cypher/fragments/note_filter.cypher."""
        return {
            "after": self.after, "before": self.before, "tags": list(self.tags), "speakers": list(self.speakers),
            "sessions": list(self.sessions), "include_invalid": self.include_superseded,
            "include_archived": self.include_archived, "as_of": self.as_of, "valid_at": self.valid_at,
        }

    def admits(self, props: Mapping[str, Any]) -> bool:
        """cypher/fragments/note_filter.cypher over a note's properties, but for the tenant."""
        if self.as_of is not None and (props.get("created_at") is None or props["created_at"] > self.as_of):
            return False
        if not self.include_archived and (
            props.get("archived_at") is not None if self.as_of is None
            else in_periods(props.get("archived_periods") or (), self.as_of)
        ):
            return False
        invalid_at = props.get("invalid_at")
        if self.as_of is not None and invalid_at is not None and invalid_at > self.as_of:
            invalid_at = None  # superseded after the time asked about
        if self.valid_at is not None:
            start, end = props.get("valid_from"), props.get("valid_to") or invalid_at
            if start is None or start > self.valid_at or (invalid_at is not None and end <= self.valid_at):
                return False
        elif not self.include_superseded and invalid_at is not None:
            return False
        event_time = props.get("event_time")
        if self.after is not None and (event_time is None or event_time < self.after):
            return False
        if self.before is not None and (event_time is None or event_time >= self.before):
            return False
        if self.tags and not set(props.get("tags") or ()) & set(self.tags):
            return False
        if self.speakers and props.get("speaker") not in self.speakers:
            return False
        return not self.sessions or props.get("session") in self.sessions


NO_FILTER = SearchFilter()
EVERY_NOTE = SearchFilter(include_superseded=True, include_archived=True)  # every note the tenant holds


@dataclass(frozen=True)
class Step:
    """One edge of the path by which graph expansion reached a note: from `from_id` over a typed link, or
    NEXT / PREVIOUS along its session."""

    from_id: str
    type: str
    reason: str = ""
    confidence: float = 1.0


@dataclass(frozen=True)
class SearchHit:
    """A note found by search, with its score and why it was found: the index scores of a seed, or the
    path from a seed for a note reached by expansion, and any prior that moved it."""

    note: Note
    score: float
    vector_score: float | None = None
    fulltext_score: float | None = None
    seed_score: float | None = None  # the fused index score, before priors and expansion
    path: tuple[Step, ...] = ()  # empty for a seed
    boosts: tuple[tuple[str, float], ...] = ()  # (prior, amount added), e.g. ("speaker", 0.1)
    passage: tuple[int, int] | None = None  # the span of a long note's content whose vector gave vector_score

    @property
    def hops(self) -> int:
        return len(self.path)

    def to_dict(self) -> dict[str, Any]:
        scores = _fields(self, skip=("note", "path", "boosts"))  # the score and the three index scores
        return {**scores, "hops": self.hops, "path": _jsonable(self.path), "boosts": dict(self.boosts),
                "note": self.note.to_dict()}


@dataclass(frozen=True)
class ProposedLink:
    """A link an analyser proposes from the new note to one of the candidates it was offered."""

    target_id: str
    type: str
    reason: str
    confidence: float


@dataclass(frozen=True)
class NeighbourUpdate:
    """An analyser's change to a candidate's derived fields (A-Mem's memory evolution)."""

    id: str
    reason: str
    context: str | None = None
    add_tags: tuple[str, ...] = ()
    remove_tags: tuple[str, ...] = ()


# What an entity is: a named thing of one of the first seven kinds, or a topic (a subject this memory keeps coming
# back to: "dance studio"). `group` and `thing` are the kinds of databases extracted before topics (schema 11), until
# `amem-graph entities extract` finds their entities again.
EntityKind = Literal["person", "pet", "place", "org", "product", "work", "event", "topic", "group", "thing"]
ENTITY_KINDS: tuple[str, ...] = ("person", "pet", "place", "org", "product", "work", "event", "topic")


@dataclass(frozen=True)
class Mention:
    """An entity a note names, as an extractor (or the LLM) found it: `key` is what resolves it to one
    entity per thing in a tenant (see entities.keys)."""

    key: str
    name: str
    kind: EntityKind
    confidence: float = 1.0


@dataclass(frozen=True)
class Entity:
    """A person, place or thing the notes of a tenant mention; `mentions` counts the notes that name it by this
    key. `alias_of` is the entity it was merged into; `merged`, the entities merged into it."""

    tenant: str
    key: str
    name: str
    kind: EntityKind
    aliases: tuple[str, ...] = ()
    mentions: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    alias_of: str | None = None
    merged: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


MergeBy = Literal["user", "rules", "llm"]


@dataclass(frozen=True)
class EntityMerge:
    """One entity (`alias`) merged into another (`into`): when, why, and who decided (a user, the clear-evidence
    rules, or the LLM). Undone by `memory.entities.unmerge(alias)`, which keeps it as ended (`ended_at`), so that
    reads as of a past moment see the merges held then."""

    alias: str
    into: str
    at: datetime | None
    reason: str
    by: MergeBy
    ended_at: datetime | None = None  # when an unmerge ended it; None while it holds

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


@dataclass(frozen=True)
class NoteAnalysis:
    """What an analyser derived for one note: its fields, its links and the neighbours it evolves."""

    keywords: tuple[str, ...]
    context: str
    tags: tuple[str, ...]
    links: tuple[ProposedLink, ...] = ()
    updates: tuple[NeighbourUpdate, ...] = ()
    analysis: AnalysisKind = "heuristic"
    model: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    dropped: tuple[str, ...] = ()  # why parts of the answer were not used
    degraded_reason: str | None = None
    entities: tuple[Mention, ...] | None = None  # None: the analyser did not look (the extractor does)


@dataclass(frozen=True)
class NoteVersion:
    """A note's fields as they were before one change; `version` is the number they had."""

    note_id: str
    version: int
    content: str
    context: str
    keywords: tuple[str, ...]
    tags: tuple[str, ...]
    category: str | None
    importance: float | None
    event_time: datetime | None
    valid_from: datetime | None
    valid_to: datetime | None
    reason: str
    evolution_id: str | None = None
    analysis: str | None = None  # which analyser had produced the derived fields, and with which model
    model: str | None = None
    neighbourhood: str = ""


@dataclass(frozen=True)
class Evolution:
    """One analysed add (or reanalysis): the trigger, the decision, its cost and the versions it revised."""

    id: str
    at: datetime | None
    trigger_note_id: str
    analysis: str
    model: str | None
    decision: dict[str, Any]
    prompt_tokens: int
    completion_tokens: int
    revised: tuple[tuple[str, int], ...] = ()  # (note id, version) of each NoteVersion written


@dataclass(frozen=True)
class Supersession:
    """A contradicted note points at the newer note that invalidated it."""

    newer_id: str
    reason: str
    at: datetime | None


@dataclass(frozen=True)
class NoteHistory:
    note: Note
    versions: tuple[NoteVersion, ...]
    evolutions: tuple[Evolution, ...]
    superseded_by: tuple[Supersession, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"note": self.note.to_dict(), **_fields(self, skip=("note",))}


@dataclass(frozen=True)
class RetentionPolicy:
    """What one tenant keeps searchable; a rule left None does not apply. Notes past it are archived: out of
    search and context, kept with their links and history, restorable, removed only by erasure."""

    max_notes: int | None = None  # past this many notes not archived (superseded ones too), the coldest are archived
    unused_days: float | None = None  # notes neither recalled nor added for this long
    min_heat: float | None = None  # notes colder than this (heat as the tiers compute it, from a note's counters)

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


@dataclass(frozen=True)
class Archival:
    """A note a retention policy archives (or would, in a dry run), and why: "unused", "cold" or "max_notes"."""

    note_id: str
    reason: str
    heat: float
    last_used: datetime | None  # its last recall, else when it was added

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


# -- MemoryOS tiers: short-term pages, mid-term segments, long-term persona ------------------------

# Persona fact kinds (MemoryOS's long-term personal memory): what the user is and likes, what the user
# told the assistant about the world, and what the assistant said or committed to for this user.
FACT_KINDS: tuple[str, ...] = ("profile", "user_knowledge", "assistant_knowledge")
FactKind = Literal["profile", "user_knowledge", "assistant_knowledge"]


def turn_text(user_text: str, assistant_text: str) -> str:
    """A dialogue turn as one text: the user side, then the assistant side labelled."""
    if not assistant_text:
        return user_text
    if not user_text:
        return f"Assistant: {assistant_text}"
    return f"{user_text}\nAssistant: {assistant_text}"


@dataclass(frozen=True)
class Page:
    """One dialogue turn (a user side and an assistant side, either may be empty), never rewritten.

    `tier` is "stm" while the page is among the last pages of its session, then "mtm" once it has
    joined a segment; `chain` is the dialogue chain of continuous pages it belongs to."""

    id: str
    tenant: str
    session_id: str
    seq: int
    user_text: str
    assistant_text: str
    at: datetime | None
    tier: str = "stm"
    keywords: tuple[str, ...] = ()
    chain_id: str | None = None
    chain_summary: str = ""
    segment_id: str | None = None
    promoted_at: datetime | None = None
    analysis: AnalysisKind = "heuristic"
    chain_keywords: tuple[str, ...] = ()
    created_at: datetime | None = None  # when the memory recorded the turn (`at` is when it was said)
    joined_at: datetime | None = None  # when it left the short-term memory for its segment
    embedding: tuple[float, ...] | None = field(default=None, repr=False, compare=False)  # only when asked for

    @property
    def text(self) -> str:
        return turn_text(self.user_text, self.assistant_text)

    def to_dict(self) -> dict[str, Any]:
        return _fields(self, skip=("embedding",))


@dataclass(frozen=True)
class Segment:
    """A topic of the mid-term memory: pages joined by similarity, with a summary and heat counters."""

    id: str
    tenant: str
    summary: str
    keywords: tuple[str, ...]
    pages: int
    visits: int  # retrievals since the last promotion (N_visit)
    interaction_len: int  # pages joined since the last promotion (L_interaction)
    last_access: datetime | None
    heat: float  # computed when read, so an untouched segment cools
    created_at: datetime | None = None
    archived_at: datetime | None = None
    promoted_at: datetime | None = None
    promotions: int = 0
    analysis: AnalysisKind = "heuristic"
    keyword_counts: tuple[int, ...] = ()  # how many of its pages had each keyword (only with the embedding)
    embedding: tuple[float, ...] | None = field(default=None, repr=False, compare=False)  # its centroid, when asked

    def to_dict(self) -> dict[str, Any]:
        return _fields(self, skip=("embedding", "keyword_counts"))


@dataclass(frozen=True)
class Fact:
    """A persona fact, derived from the pages of a promoted segment (`page_ids`)."""

    id: str
    tenant: str
    kind: str
    text: str
    confidence: float
    mentions: int = 1  # how many promotions derived it again
    uses: int = 0  # how many contexts it was part of
    assistant: str | None = None  # the assistant whose knowledge it is (assistant_knowledge only)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    page_ids: tuple[str, ...] = ()
    segment_ids: tuple[str, ...] = ()
    analysis: AnalysisKind = "heuristic"

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


@dataclass(frozen=True)
class ProposedFact:
    """A fact an extractor found in a segment's pages, before it is de-duplicated against the persona."""

    kind: str
    text: str
    page_id: str
    confidence: float = 0.6


def _fields(obj: Any, skip: Collection[str] = ()) -> dict[str, Any]:
    """A dataclass's fields but those in `skip`, JSON-ready."""
    return {f.name: _jsonable(getattr(obj, f.name)) for f in fields(obj) if f.name not in skip}


def _jsonable(value: Any) -> Any:
    if is_dataclass(value):  # nested records: a note's links, a hit's path, a history's versions
        return _fields(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


AttachmentKind = Literal["chat", "document", "item"]  # which adapter owns a note's attachment


@dataclass(frozen=True)
class Attachment:
    """What an adapter keeps on a note beside the engine's fields (see cypher/attached/set.cypher)."""

    note_id: str
    attached: str  # the caller's original object, as JSON
    store_key: str | None = None  # a LangGraph store item's key
    external_vector: Sequence[float] | None = None  # from the caller's own embedding model


@dataclass(frozen=True)
class Attached:
    note: Note
    attached: str | None  # None for a note no adapter owns (found by `attached_search(plain=True)`)
    kind: AttachmentKind | None
    store_key: str | None = None
    attached_at: datetime | None = None  # when the attachment was last set (a put, an upsert)
    score: float | None = None  # cosine normalised to [0, 1], from a search
