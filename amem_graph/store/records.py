"""Domain objects from a store's node properties: the one mapping both stores use. Times may come as
epoch milliseconds (what the Neo4j statements return, the driver decodes them fastest) or as datetimes
(what the embedded store keeps)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from ..core import validation
from ..models import Entity, Evolution, Fact, Link, Note, NoteInput, NoteVersion, Page, Passage, Segment

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def time_of(value: int | datetime | None) -> datetime | None:
    """A time as stored: epoch milliseconds (see cypher/fragments/note_map.cypher) or a datetime."""
    if value is None or isinstance(value, datetime):
        return value
    return _EPOCH + timedelta(milliseconds=value)


def note_from_record(props: dict[str, Any], links: Sequence[dict[str, Any]] = (), embedding: Any = None) -> Note:
    """A Note from its node properties (the store keeps '' for 'no source')."""
    return Note(
        id=props["id"], tenant=props["tenant"], content=props["content"], content_hash=props["content_hash"],
        source=props.get("source") or None, keywords=tuple(props.get("keywords") or ()),
        tags=tuple(props.get("tags") or ()), context=props.get("context") or "",
        category=props.get("category"), importance=float(props.get("importance", 0.5)),
        retrieval_count=int(props.get("retrieval_count", 0)),
        event_time=time_of(props.get("event_time")), created_at=time_of(props.get("created_at")),
        updated_at=time_of(props.get("updated_at")), last_accessed=time_of(props.get("last_accessed")),
        version=int(props.get("version", 1)), valid_from=time_of(props.get("valid_from")),
        valid_to=time_of(props.get("valid_to")), invalid_at=time_of(props.get("invalid_at")),
        archived_at=time_of(props.get("archived_at")),
        archived_periods=tuple(time_of(bound) for bound in props.get("archived_periods") or ()), analysis=props.get("analysis") or "none",
        model=props.get("model"), session=props.get("session"), seq=props.get("seq"),
        speaker=props.get("speaker"), neighbourhood=props.get("neighbourhood") or "",
        neighbourhood_after=tuple(time_of(bound) for bound in props.get("neighbourhood_after") or ()),
        extracted=props.get("extracted"), given=tuple(props.get("given") or ()),
        links=tuple(link_from_record(link) for link in links),
        embedding=None if embedding is None else tuple(float(v) for v in embedding),
    )


def brief_note(props: Mapping[str, Any]) -> Note:
    """A note from a brief map (cypher/fragments/note_brief.cypher: id, content, speaker, session, event time),
    which ranking uses before it reads the final notes in full."""
    return Note(
        id=props["id"], tenant=props["tenant"], content=props["content"], content_hash="",
        speaker=props.get("speaker"), session=props.get("session"), event_time=time_of(props.get("event_time")),
    )


def link_from_record(row: dict[str, Any]) -> Link:
    return Link(
        source_id=row["source_id"], target_id=row["target_id"], type=row["type"],
        reason=row.get("reason") or "",
        confidence=float(row["confidence"]) if row.get("confidence") is not None else 1.0,
        created_at=time_of(row.get("created_at")), invalid_at=time_of(row.get("invalid_at")),
        periods=tuple(time_of(bound) for bound in link_periods(row)),
    )


def link_periods(props: Mapping[str, Any]) -> list[Any]:
    """cypher/fragments/link_periods.cypher: the `periods` a link keeps or, for a link made before links kept
    them, its creation and its invalidation if any."""
    if props.get("periods") is not None:
        return list(props["periods"])
    return [bound for bound in (props.get("created_at"), props.get("invalid_at")) if bound is not None]


def version_from_record(props: dict[str, Any]) -> NoteVersion:
    return NoteVersion(
        note_id=props["note_id"], version=int(props["version"]), content=props.get("content") or "",
        context=props.get("context") or "", keywords=tuple(props.get("keywords") or ()),
        tags=tuple(props.get("tags") or ()), category=props.get("category"),
        importance=props.get("importance"), event_time=time_of(props.get("event_time")),
        valid_from=time_of(props.get("valid_from")), valid_to=time_of(props.get("valid_to")),
        reason=props.get("reason") or "", evolution_id=props.get("evolution_id"),
        analysis=props.get("analysis"), model=props.get("model"),
        neighbourhood=props.get("neighbourhood") or "",
    )


def evolution_from_record(props: dict[str, Any], revised: Sequence[Sequence[Any]]) -> Evolution:
    return Evolution(
        id=props["id"], at=time_of(props.get("at")), trigger_note_id=props["trigger_note_id"],
        analysis=props.get("analysis") or "", model=props.get("model"),
        decision=json.loads(props.get("decision") or "{}"),
        prompt_tokens=int(props.get("prompt_tokens") or 0),
        completion_tokens=int(props.get("completion_tokens") or 0),
        revised=tuple(sorted((str(note_id), int(version)) for note_id, version in revised)),
    )


def note_row(note: NoteInput, vector: Any, analysis: str, model: str | None, dimension: int,
             neighbourhood: str = "", passages: Sequence[Passage] = (),
             called: tuple[str, str] | None = None, extracted: str | None = None,
             given: Sequence[str] = ()) -> dict[str, Any]:
    """What a new note is written from, in either store ('' for no source: a key cannot hold null). `called`:
    the speaker the note addresses and the name it calls them by; `extracted`, the entity extractor that read it;
    `given`, the derived fields the caller set (kept when a pending analysis arrives)."""
    return {
        "extracted": extracted, "given": list(given) or None,
        "passages": passage_rows(str(note.id), passages, dimension),
        "addressee": called[0] if called else None, "called": called[1] if called else None,
        "id": note.id, "content": note.content, "content_hash": validation.content_hash(note.content),
        "source": note.source or "", "keywords": list(note.keywords), "tags": list(note.tags), "context": note.context,
        "category": note.category, "importance": note.importance, "event_time": note.event_time, "analysis": analysis,
        "model": model, "session": note.session, "speaker": note.speaker, "neighbourhood": neighbourhood,
        "embedding": validation.vector(vector, dimension),
    }


def passage_rows(note_id: str, passages: Sequence[Passage], dimension: int) -> list[dict[str, Any]]:
    """A note's passages as both stores write them: an id of the note's and the span, and the vector."""
    return [
        {"id": f"{note_id}:{p.start}", "start": p.start, "end": p.end, "embedding": validation.vector(p.vector, dimension)}
        for p in passages
    ]


def page_from_record(props: Mapping[str, Any], embedding: Any = None) -> Page:
    return Page(
        id=props["id"], tenant=props["tenant"], session_id=props["session_id"], seq=int(props["seq"]),
        user_text=props.get("user_text") or "", assistant_text=props.get("assistant_text") or "",
        at=time_of(props.get("at")), tier=props.get("tier") or "stm", keywords=tuple(props.get("keywords") or ()),
        chain_id=props.get("chain_id"), chain_summary=props.get("chain_summary") or "",
        segment_id=props.get("segment_id"), promoted_at=time_of(props.get("promoted_at")),
        analysis=props.get("analysis") or "heuristic", chain_keywords=tuple(props.get("chain_keywords") or ()),
        created_at=time_of(props.get("created_at")), joined_at=time_of(props.get("joined_at")),
        embedding=None if embedding is None else tuple(float(v) for v in embedding),
    )


def segment_from_record(props: Mapping[str, Any], heat: float, embedding: Any = None) -> Segment:
    """With `embedding`, the keyword counts too: what a page joining the segment needs."""
    return Segment(
        id=props["id"], tenant=props["tenant"], summary=props.get("summary") or "",
        keywords=tuple(props.get("keywords") or ()), pages=int(props.get("pages") or 0),
        visits=int(props.get("visits") or 0), interaction_len=int(props.get("interaction_len") or 0),
        last_access=time_of(props.get("last_access")), heat=float(heat), created_at=time_of(props.get("created_at")),
        archived_at=time_of(props.get("archived_at")), promoted_at=time_of(props.get("promoted_at")),
        promotions=int(props.get("promotions") or 0), analysis=props.get("analysis") or "heuristic",
        keyword_counts=() if embedding is None else tuple(int(c) for c in props.get("keyword_counts") or ()),
        embedding=None if embedding is None else tuple(float(v) for v in embedding),
    )


def fact_from_record(props: Mapping[str, Any], pages: Sequence[str] = (), segments: Sequence[str] = ()) -> Fact:
    return Fact(
        id=props["id"], tenant=props["tenant"], kind=props["kind"], text=props["text"],
        confidence=float(props.get("confidence") or 0.0), mentions=int(props.get("mentions") or 1),
        uses=int(props.get("uses") or 0), assistant=props.get("assistant"),
        created_at=time_of(props.get("created_at")), updated_at=time_of(props.get("updated_at")),
        page_ids=tuple(sorted(pages)), segment_ids=tuple(sorted(segments)),
        analysis=props.get("analysis") or "heuristic",
    )


def entity_from_record(props: Mapping[str, Any]) -> Entity:
    return Entity(
        tenant=props["tenant"], key=props["key"], name=props.get("name") or props["key"],
        kind=props.get("kind") or "thing", aliases=tuple(props.get("aliases") or ()),
        mentions=int(props.get("mentions") or 0), first_seen=time_of(props.get("first_seen")),
        last_seen=time_of(props.get("last_seen")), alias_of=props.get("alias_of"),
        merged=tuple(sorted(props.get("merged") or ())),
    )
