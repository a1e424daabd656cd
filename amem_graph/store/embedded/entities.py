"""The entity primitives in the embedded store: each does what its statement in cypher/entity/ does on Neo4j."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from ...models import NO_FILTER, Entity, Note, SearchFilter
from ..base import EVERY, MAX_ALIASES, MentionWrite
from ..records import entity_from_record
from .graph import Node, PropertyGraph
from .notes import passes

if TYPE_CHECKING:
    from .store import EmbeddedStore


class EmbeddedEntities:
    """Entity primitives over the store's graph for one tenant."""

    _store: EmbeddedStore
    graph: PropertyGraph
    tenant: str
    now: datetime

    def _entity(self, key: str) -> Node | None:
        return self.graph.unique("Entity", tenant=self.tenant, key=key)

    def mention(self, mentions: Sequence[MentionWrite]) -> None:
        """cypher/entity/mention.cypher."""
        for m in mentions:
            note = self._store.note_node(self.tenant, m.note_id)
            if note is None:
                continue
            entity = self._entity(m.key)
            if entity is None:
                entity = self.graph.create_node(["Entity"], {
                    "tenant": self.tenant, "key": m.key, "name": m.name, "kind": m.kind, "aliases": [], "mentions": 0,
                    "first_seen": m.seen, "last_seen": m.seen,
                })
            rel = next((r for r in self.graph.relationships(note, ["MENTIONS"]) if r.end == entity.key), None)
            props = entity.props
            changes: dict[str, object] = {
                "first_seen": min(props["first_seen"], m.seen), "last_seen": max(props["last_seen"], m.seen),
            }
            if m.sure:
                changes["kind"] = m.kind
            if rel is None:
                self.graph.create_rel("MENTIONS", note, entity, {"confidence": m.confidence})
                changes["mentions"] = props["mentions"] + 1
            elif m.confidence > rel.props.get("confidence", 0.0):
                self.graph.set_rel(rel, confidence=m.confidence)
            aliases = list(props.get("aliases") or [])
            if m.name != props["name"] and m.name not in aliases and len(aliases) < MAX_ALIASES:
                changes["aliases"] = [*aliases, m.name]
            self.graph.set(entity, **changes)

    def entities(self, *, keys: Sequence[str] | None = None, limit: int = EVERY, offset: int = 0) -> list[Entity]:
        """cypher/entity/by_key and list.cypher."""
        if keys is not None:
            return [entity_from_record(n.props) for k in keys if (n := self._entity(k)) is not None]
        nodes = sorted(self.graph.labelled("Entity", self.tenant), key=lambda n: (-n.props["mentions"], n.props["key"]))
        return [entity_from_record(n.props) for n in nodes[offset: offset + limit]]

    def mentioned_by(self, note_ids: Sequence[str]) -> list[tuple[str, Entity, float]]:
        """cypher/entity/of_notes.cypher."""
        out = []
        for note_id in sorted(note_ids):
            note = self._store.note_node(self.tenant, note_id)
            if note is None:
                continue
            found = [(self.graph.nodes[r.end], r) for r in self.graph.relationships(note, ["MENTIONS"])]
            found.sort(key=lambda pair: (pair[0].props["mentions"], pair[0].props["key"]))
            out += [(note_id, entity_from_record(e.props), float(r.props.get("confidence", 1.0))) for e, r in found]
        return out

    def mentioning(
        self, keys: Sequence[str], limit: int, *, filters: SearchFilter = NO_FILTER
    ) -> list[tuple[Entity, Note, float]]:
        """cypher/entity/mentioning.cypher."""
        out = []
        for key in keys:
            entity = self._entity(key)
            if entity is None:
                continue
            found = [(self.graph.nodes[r.start], r) for r in self.graph.relationships(entity, ["MENTIONS"], "in")]
            found = [(n, r) for n, r in found if passes(n.props, filters)]
            found.sort(key=lambda pair: pair[0].props["created_at"], reverse=True)
            record = entity_from_record(entity.props)
            out += [(record, self._store.to_note(n), float(r.props.get("confidence", 1.0))) for n, r in found[:limit]]
        return out


__all__ = ["EmbeddedEntities"]
