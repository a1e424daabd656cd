"""The entity primitives in the embedded store: each does what its statement in cypher/entity/ does on Neo4j."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from ...models import NO_FILTER, Entity, EntityMerge, MergeBy, Note, SearchFilter
from ..base import EVERY, MAX_ALIASES, MentionRow, MentionWrite
from ..records import entity_from_record
from .graph import Node, PropertyGraph, Rel
from .view import StoreView

_LATEST = datetime.max.replace(tzinfo=UTC)


class EmbeddedEntities:
    """Entity primitives over the store's graph for one tenant."""

    _store: StoreView
    graph: PropertyGraph
    tenant: str
    now: datetime

    def _entity(self, key: str) -> Node | None:
        return self.graph.unique("Entity", tenant=self.tenant, key=key)

    def _into(self, entity: Node) -> Node | None:
        """The entity this one was merged into (ALIAS_OF), if any."""
        return next((self.graph.nodes[r.end] for r in self.graph.relationships(entity, ["ALIAS_OF"])), None)

    def _aliases(self, entity: Node) -> list[Node]:
        return [self.graph.nodes[r.start] for r in self.graph.relationships(entity, ["ALIAS_OF"], "in")]

    def _record(self, entity: Node) -> Entity:
        """cypher/fragments/entity_map.cypher."""
        into = self._into(entity)
        return entity_from_record({**entity.props, "alias_of": into.props["key"] if into else None,
                                   "merged": [a.props["key"] for a in self._aliases(entity)]})

    def mention(
        self, mentions: Sequence[MentionWrite], *, replace: Sequence[str] = (), extracted: str | None = None,
    ) -> None:
        """cypher/entity/unmention.cypher, mention.cypher and extracted.cypher."""
        replaced = [n for note_id in replace if (n := self._store.note_node(self.tenant, note_id)) is not None]
        for note in replaced:
            for rel in list(self.graph.relationships(note, ["MENTIONS"])):
                entity = self.graph.nodes[rel.end]
                self.graph.delete_rel(rel)
                left = entity.props["mentions"] - 1
                merged = any(True for _ in self.graph.relationships(entity, ["ALIAS_OF", "WAS_ALIAS_OF"], "both"))
                if left <= 0 and not merged:
                    self.graph.delete_node(entity)
                else:
                    self.graph.set(entity, mentions=left)
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
                self.graph.create_rel("MENTIONS", note, entity, {"confidence": m.confidence, "at": self.now})
                changes["mentions"] = props["mentions"] + 1
            elif m.confidence > rel.props.get("confidence", 0.0):
                self.graph.set_rel(rel, confidence=m.confidence)
            aliases = list(props.get("aliases") or [])
            if m.name != props["name"] and m.name not in aliases and len(aliases) < MAX_ALIASES:
                changes["aliases"] = [*aliases, m.name]
            self.graph.set(entity, **changes)
        if extracted is not None:
            for note in replaced:
                self.graph.set(note, extracted=extracted)

    def entities(
        self, *, keys: Sequence[str] | None = None, limit: int = EVERY, offset: int = 0, least_topic_mentions: int = 0,
    ) -> list[Entity]:
        """cypher/entity/by_key and list.cypher."""
        if keys is not None:
            return [self._record(n) for k in keys if (n := self._entity(k)) is not None]
        roots = (n for n in self.graph.labelled("Entity", self.tenant) if self._into(n) is None and n.props["mentions"] > 0
                 and (n.props["kind"] != "topic" or n.props["mentions"] >= least_topic_mentions))
        nodes = sorted(roots, key=lambda n: (-n.props["mentions"], n.props["key"]))
        return [self._record(n) for n in nodes[offset: offset + limit]]

    def mentioning(
        self, keys: Sequence[str], limit: int, *, filters: SearchFilter = NO_FILTER
    ) -> list[tuple[Entity, Note, float]]:
        """cypher/entity/mentioning.cypher."""
        out = []
        seen: set[int] = set()
        for key in keys:
            named = self._entity(key)
            if named is None:
                continue
            entity = self._into(named) or named
            if entity.key in seen:
                continue
            seen.add(entity.key)
            best: dict[int, tuple[Node, float]] = {}
            for alias in (entity, *self._aliases(entity)):
                for r in self.graph.relationships(alias, ["MENTIONS"], "in"):
                    note, confidence = self.graph.nodes[r.start], float(r.props.get("confidence", 1.0))
                    if filters.admits(note.props) and confidence > best.get(note.key, (note, -1.0))[1]:
                        best[note.key] = (note, confidence)
            found = sorted(best.values(), key=lambda pair: pair[0].props["created_at"], reverse=True)
            record = self._record(entity)
            out += [(record, self._store.to_note(n), confidence) for n, confidence in found[:limit]]
        return out

    def alias(self, key: str, into: str | None, *, reason: str = "", by: MergeBy = "user") -> str | None:
        """cypher/entity/alias.cypher; with `into` None, cypher/entity/unalias.cypher."""
        if into is None:
            return self._unalias(key)
        alias, target = self._entity(key), self._entity(into)
        if alias is None or target is None:
            return None
        if not any(r.end == target.key for r in self.graph.relationships(alias, ["ALIAS_OF"])):
            self.graph.create_rel("ALIAS_OF", alias, target, {"at": self.now, "reason": reason, "by": by})
        return into

    def _unalias(self, key: str) -> str | None:
        alias = self._entity(key)
        rel = next(self.graph.relationships(alias, ["ALIAS_OF"]), None) if alias is not None else None
        if alias is None or rel is None:
            return None
        into = self.graph.nodes[rel.end]
        self.graph.create_rel("WAS_ALIAS_OF", alias, into, {**rel.props, "ended_at": self.now})
        self.graph.delete_rel(rel)
        return str(into.props["key"])

    def merges(self, into: str | None = None) -> list[EntityMerge]:
        """cypher/entity/merges.cypher; with `into` None, cypher/entity/merge_records.cypher."""
        if into is None:
            return self._merge_records()
        key = into
        entity = self._entity(key)
        if entity is None:
            return []
        rows = [(self.graph.nodes[r.start].props["key"], r.props) for r in self.graph.relationships(entity, ["ALIAS_OF"], "in")]
        rows.sort(key=lambda row: (row[1]["at"], row[0]))
        return [EntityMerge(alias, key, props["at"], props["reason"], props["by"]) for alias, props in rows]

    def _merge_records(self) -> list[EntityMerge]:
        found = [
            EntityMerge(alias.props["key"], self.graph.nodes[r.end].props["key"], r.props.get("at"), r.props["reason"],
                        r.props["by"], r.props.get("ended_at"))
            for alias in self.graph.labelled("Entity", self.tenant)
            for r in self.graph.relationships(alias, ["ALIAS_OF", "WAS_ALIAS_OF"])
        ]
        return sorted(found, key=lambda m: (m.at or _LATEST, m.alias, m.ended_at or _LATEST))

    def mentions(
        self, *, keys: Sequence[str] | None = None, note_ids: Sequence[str] | None = None
    ) -> list[MentionRow]:
        """cypher/entity/mention_times_of_entities.cypher, of_notes.cypher and mention_times.cypher."""
        graph = self.graph
        if note_ids is not None and keys is None:
            return self._of_notes(note_ids)
        if keys is not None:
            entities = [e for key in keys if (e := self._entity(key)) is not None]
            rels = [r for e in entities for r in graph.relationships(e, ["MENTIONS"], "in")]
        else:
            rels = [r for e in graph.labelled("Entity", self.tenant) for r in graph.relationships(e, ["MENTIONS"], "in")]
        return [self._mention(r) for r in rels]

    def _of_notes(self, note_ids: Sequence[str]) -> list[MentionRow]:
        out = []
        records: dict[int, Entity] = {}  # an entity that many notes mention is read once
        for note_id in sorted(note_ids):
            note = self._store.note_node(self.tenant, note_id)
            if note is None:
                continue
            found = [(self.graph.nodes[r.end], r) for r in self.graph.relationships(note, ["MENTIONS"])]
            found.sort(key=lambda pair: (pair[0].props["mentions"], pair[0].props["key"]))
            for entity, rel in found:
                if rel.end not in records:
                    records[rel.end] = self._record(entity)
                out.append(self._mention(rel, records[rel.end]))
        return out

    def _mention(self, rel: Rel, entity: Entity | None = None) -> MentionRow:
        note = self.graph.nodes[rel.start]
        return MentionRow(note.props["id"], self.graph.nodes[rel.end].props["key"],
                       rel.props.get("at") or note.props["created_at"], float(rel.props.get("confidence", 1.0)), entity)


__all__ = ["EmbeddedEntities"]
