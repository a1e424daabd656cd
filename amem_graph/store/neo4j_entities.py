"""The entity primitives on Neo4j: each one named statement inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from neo4j import Record

from ..models import NO_FILTER, Entity, EntityMerge, MergeBy, Note, SearchFilter
from .base import EVERY, MAX_ALIASES, MentionRow, MentionWrite
from .records import brief_note, entity_from_record, time_of


class Neo4jEntities:
    """Entity primitives over `run` (one named statement in the transaction, scoped by the tenant)."""

    run: Callable[..., list[Record]]
    _each: Callable[..., list[Record]]  # a statement over rows, no round trip for none

    def mention(
        self, mentions: Sequence[MentionWrite], *, replace: Sequence[str] = (), extracted: str | None = None,
    ) -> None:
        self._each("entity/unmention", "ids", list(replace))
        rows = [
            {"note_id": m.note_id, "key": m.key, "name": m.name, "kind": m.kind, "confidence": m.confidence,
             "sure": m.sure, "seen": int(m.seen.timestamp() * 1000)}
            for m in mentions
        ]
        self._each("entity/mention", "rows", rows, max_aliases=MAX_ALIASES)
        if extracted is not None:
            self._each("entity/extracted", "ids", list(replace), extractor=extracted)

    def entities(
        self, *, keys: Sequence[str] | None = None, limit: int = EVERY, offset: int = 0, least_topic_mentions: int = 0,
    ) -> list[Entity]:
        if keys is not None:
            rows = self._each("entity/by_key", "keys", list(keys))
        else:
            rows = self.run("entity/list", limit=limit, offset=offset, least_topic_mentions=least_topic_mentions)
        return [entity_from_record(r["entity"]) for r in rows]

    def mentioning(
        self, keys: Sequence[str], limit: int, *, filters: SearchFilter = NO_FILTER
    ) -> list[tuple[Entity, Note, float]]:
        rows = self._each("entity/mentioning", "keys", list(keys), limit=limit, **filters.params())
        return [(entity_from_record(r["entity"]), brief_note(r["note"]), float(r["confidence"])) for r in rows]

    def alias(self, key: str, into: str | None, *, reason: str = "", by: MergeBy = "user") -> str | None:
        if into is None:
            rows = self.run("entity/unalias", key=key)
            return rows[0]["into"] if rows else None
        return into if self.run("entity/alias", key=key, into=into, reason=reason, by=by) else None

    def merges(self, into: str | None = None) -> list[EntityMerge]:
        if into is not None:
            return [EntityMerge(r["alias"], into, time_of(r["at"]), r["reason"], r["by"])
                    for r in self.run("entity/merges", key=into)]
        return [EntityMerge(r["alias"], r["into"], time_of(r["at"]), r["reason"], r["by"], time_of(r["ended_at"]))
                for r in self.run("entity/merge_records")]

    def mentions(
        self, *, keys: Sequence[str] | None = None, note_ids: Sequence[str] | None = None
    ) -> list[MentionRow]:
        if keys is not None:
            rows = self._each("entity/mention_times_of_entities", "keys", list(keys))
        elif note_ids is not None:
            rows = self._each("entity/of_notes", "ids", list(note_ids))
        else:
            rows = self.run("entity/mention_times")
        # Every mention has a time (its own, else its note's): none is left out.
        return [MentionRow(r["note_id"], r["key"], at, float(r["confidence"] if r["confidence"] is not None else 1.0),
                        entity_from_record(r["entity"]) if "entity" in r.keys() else None)
                for r in rows if (at := time_of(r["at"])) is not None]


__all__ = ["Neo4jEntities"]
