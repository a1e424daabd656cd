"""What the notes of a tenant say about a person, place or thing (reach it as `memory.entities`)."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from ..core import validation
from ..core.entity_keys import entity_key
from ..core.log import event
from ..core.timeline import note_as_of
from ..errors import EntityNotFound, InvalidInput
from ..llm.client import LLMClient
from ..models import Entity, EntityMerge, Mention, MergeBy, Note
from ..store.base import MemoryStore, Tx
from .aliases import MergeSuggestion, decided, suggestions
from .as_of import entity_as_of, mentions_as_of, merges_as_of, merges_into
from .extract import Extractor, extract, mention_rows, note_mentions
from .topics import MIN_TOPIC_NOTES, shown

_EARLIEST = datetime.min.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class EntityProfile:
    """An entity, the notes that mention it (in time order) and the entities mentioned beside it most."""

    entity: Entity
    notes: tuple[Note, ...]
    related: tuple[tuple[Entity, int], ...]  # (entity, notes mentioning both)

    def to_dict(self) -> dict[str, Any]:
        return {"entity": self.entity.to_dict(), "notes": [n.to_dict() for n in self.notes],
                "related": [{"entity": e.to_dict(), "notes": count} for e, count in self.related]}


class Entities:
    """A tenant's entities: list them, look one up by name, see what a note mentions, find them in notes
    written before there were entities."""

    def __init__(
        self, store: MemoryStore, tenant: str, extractor: Extractor | None, llm: LLMClient | None = None,
        assistant: str | None = None,
    ) -> None:
        self._store = store
        self._tenant = tenant
        self._extractor = extractor
        self._llm = llm
        self._assistant = assistant

    @property
    def extractor(self) -> str:
        """Which extractor finds the entities of new notes: spacy, rules or off."""
        return self._extractor.name if self._extractor is not None else "off"

    def backfill(self, *, tenant: str | None = None, batch: int = 200) -> int:
        """Find again the entities of every note of the tenant that today's extractor has not read (notes written
        before entities, schema 6, or read by an older extractor), replacing what was found before: an entity
        no note mentions any more goes, unless it takes part in a merge (yours stay, and an entity an older
        extractor gave a kind of its own takes the kind found now). `batch` notes per transaction, each recording
        the extractor that read it: killed, a run goes on where it stopped, and a second run reads nothing.
        Returns the notes read."""
        if batch < 1:
            raise InvalidInput(f"batch must be at least 1, got {batch}")
        tenant = self._of(tenant)
        version = self._extractor.version if self._extractor is not None else None
        offset = done = 0
        while notes := self._store.read(tenant, lambda tx: tx.notes(limit=batch, offset=offset)):
            offset += len(notes)
            stale = [note for note in notes if version is None or note.extracted != version]
            if not stale:
                continue
            found = note_mentions(stale, extract(self._extractor, stale, assistant=self._assistant))
            self._store.write(tenant, lambda tx, s=stale, f=found: _extracted_again(tx, s, f, version))
            done += len(stale)
        return done

    def list(
        self, *, tenant: str | None = None, limit: int = 50, offset: int = 0, as_of: datetime | str | None = None,
    ) -> list[Entity]:
        """The tenant's entities, the most mentioned first (one merged into another is in that one's `merged`).
        With `as_of`, those the memory held then, as `get` gives them, ranked by their mentions of then."""
        limit, offset = validation.window(limit, offset, least=0)
        at = validation.event_time(as_of, "as_of")
        if at is None:
            return self._store.read(self._of(tenant), lambda tx: tx.entities(
                limit=limit, offset=offset, least_topic_mentions=MIN_TOPIC_NOTES))
        return self._store.read(self._of(tenant), lambda tx: _listed(tx, _Moment.then(tx, at))[offset: offset + limit])

    def get(self, name: str, *, tenant: str | None = None, as_of: datetime | str | None = None) -> Entity:
        """The entity a name resolves to (as a person's name first, then as a thing's; an alias as the entity
        it was merged into); EntityNotFound if none. With `as_of`, as the memory held it then: an entity
        mentioned by then, resolved through the merges made by then and not undone by then, with its mentions,
        `alias_of` and `merged` of then; its kind, other names and first/last seen are today's (they keep no
        history)."""
        tenant = self._of(tenant)
        at = validation.event_time(as_of, "as_of")
        return self._store.read(tenant, lambda tx: _resolved(tx, name, tenant, _Moment.of(tx, at)))

    def profile(
        self, name: str, *, tenant: str | None = None, limit: int = 100, related: int = 10,
        as_of: datetime | str | None = None,
    ) -> EntityProfile:
        """An entity with the newest `limit` notes that mention it, oldest first, and its `related` entities;
        superseded and archived notes are left out. With `as_of`, as the memory held them then: the entity as
        `get` gives it, the notes whose mention was recorded by then, as they were then, left out if they were
        superseded or archived then, and the entities they mentioned then."""
        tenant = self._of(tenant)
        at = validation.event_time(as_of, "as_of")

        def read(tx: Tx) -> EntityProfile:
            moment = _Moment.of(tx, at)
            entity = _resolved(tx, name, tenant, moment)
            if moment is None:
                brief = [note for _, note, _ in tx.mentioning([entity.key], limit)]
                notes = tx.notes(ids=[n.id for n in brief])
            else:
                notes = moment.notes(tx, [entity.key, *entity.merged], limit)
            notes.sort(key=lambda n: (n.event_time or n.created_at or _EARLIEST, n.seq or 0, n.id))
            itself = {entity.key, *entity.merged}
            mentioned = _mentioned_by(tx, [n.id for n in notes], moment)
            counts = Counter(e.alias_of or e.key for e in mentioned
                             if e.key not in itself and e.alias_of not in itself and shown(e))
            top = _entities(tx, [key for key, _ in counts.most_common(related)], moment)
            return EntityProfile(entity, tuple(notes), tuple((e, counts[e.key]) for e in top))

        return self._store.read(tenant, read)

    def of_note(self, note_id: str, *, tenant: str | None = None) -> list[tuple[Entity, float]]:
        """The entities a note mentions, with the confidence of each mention (an alias as the entity it was
        merged into, with the best confidence of the two)."""
        note_id = validation.note_id(note_id)

        def read(tx: Tx) -> list[tuple[Entity, float]]:
            return [(entity, confidence) for _, entity, confidence in mentions_of(tx, [note_id])]

        return self._store.read(self._of(tenant), read)

    def merge(self, alias: str, into: str, *, reason: str = "merged by hand", tenant: str | None = None) -> EntityMerge:
        """Merge the entity named `alias` into the one named `into` (or the entity that one was merged into):
        reads then take the alias as `into`, its notes as `into`'s. Recorded with the time and `reason`;
        `unmerge` undoes it. InvalidInput if they are one entity already, if `alias` was merged into another
        or has entities merged into it (merges stay one level deep: merge those into `into` instead)."""
        tenant = self._of(tenant)
        reason = validation.text(reason, "reason", 500)
        return self._store.write(tenant, lambda tx: _merge(tx, _named(tx, alias, tenant), _resolved(tx, into, tenant), reason, "user"))

    def unmerge(self, alias: str, *, tenant: str | None = None) -> Entity:
        """Undo the merge of the entity named `alias`: it is an entity of its own again, with the notes that
        mention it by its own names. Returns it; InvalidInput if it was not merged."""
        tenant = self._of(tenant)

        def write(tx: Tx) -> Entity:
            entity = _named(tx, alias, tenant)
            was = tx.alias(entity.key, None)
            if was is None:
                raise InvalidInput(f"{entity.name!r} is not merged into another entity")
            event("entity_unmerged", logging.INFO, tenant=tenant, alias=entity.key, into=was)
            return tx.entities(keys=[entity.key])[0]

        return self._store.write(tenant, write)

    def merges(self, name: str, *, tenant: str | None = None, as_of: datetime | str | None = None) -> list[EntityMerge]:
        """The merges into the entity a name resolves to, oldest first; with `as_of`, those made by then and not
        undone by then (the name resolved as `get` resolves it then)."""
        tenant = self._of(tenant)
        at = validation.event_time(as_of, "as_of")

        def read(tx: Tx) -> list[EntityMerge]:
            moment = _Moment.of(tx, at)
            key = _resolved(tx, name, tenant, moment).key
            return tx.merges(key) if moment is None else merges_into(key, moment.held)

        return self._store.read(tenant, read)

    def suggest(self, *, tenant: str | None = None) -> list[MergeSuggestion]:
        """Pairs of entities the evidence says are one thing (entities.aliases.suggestions); with an LLM
        configured, only those the LLM confirms. Nothing is merged: `merge_suggested` does."""
        tenant = self._of(tenant)
        found = suggestions(self._store.read(tenant, lambda tx: tx.entities()))
        if self._llm is None or not found:
            return found
        # A line for each name: the newest note that mentions it (suggestions are never aliases, so each is
        # read as itself).
        keys = sorted({e.key for s in found for e in (s.alias, s.into)})
        newest = self._store.read(tenant, lambda tx: tx.mentioning(keys, 1))
        return decided(self._llm, found, {entity.key: note.content for entity, note, _ in newest})

    def merge_suggested(self, *, tenant: str | None = None) -> list[EntityMerge]:
        """Merge what `suggest` finds (decided by the LLM when one is configured, else by the rules), each
        recorded with its evidence; a pair that changed meanwhile is skipped. Returns the merges made."""
        tenant = self._of(tenant)
        by: MergeBy = "llm" if self._llm is not None else "rules"
        made = []
        for s in self.suggest(tenant=tenant):
            def write(tx: Tx, s: MergeSuggestion = s) -> EntityMerge | None:
                now = tx.entities(keys=[s.alias.key, s.into.key])
                if len(now) != 2 or any(e.alias_of for e in now) or now[0].merged:
                    return None
                return _merge(tx, now[0], now[1], s.evidence, by)

            if (merge := self._store.write(tenant, write)) is not None:
                made.append(merge)
        return made

    def _of(self, tenant: str | None) -> str:
        return validation.tenant(self._tenant if tenant is None else tenant)


@dataclass(frozen=True)
class _Moment:
    """A moment entities are read as of, with the merges that held then (entities.as_of)."""

    at: datetime
    held: tuple[EntityMerge, ...]

    @classmethod
    def of(cls, tx: Tx, at: datetime | None) -> _Moment | None:
        return None if at is None else cls.then(tx, at)

    @classmethod
    def then(cls, tx: Tx, at: datetime) -> _Moment:
        return cls(at, tuple(merges_as_of(tx.merges(), at)))

    def entities(self, tx: Tx, entities: Sequence[Entity]) -> list[Entity]:
        """These entities (as the store gives them now) as the memory held them then; those it did not hold
        are left out."""
        counts = mentions_as_of(tx.mentions(keys=[e.key for e in entities]), self.at)
        return [then for e in entities if (then := entity_as_of(e, counts, self.held)) is not None]

    def notes(self, tx: Tx, keys: Sequence[str], limit: int) -> list[Note]:
        """The newest `limit` notes whose mention of one of `keys` was recorded by then, as they were then,
        without those superseded or archived then."""
        ids = sorted({m.note_id for m in tx.mentions(keys=keys) if m.at <= self.at})
        versions = tx.history(ids).versions
        then = [n for note in tx.notes(ids=ids) if (n := note_as_of(note, versions.get(note.id, []), self.at))
                is not None and n.invalid_at is None and n.archived_at is None]
        then.sort(key=lambda n: (n.created_at or _EARLIEST, n.id), reverse=True)
        return then[:limit]


def mentions_of(tx: Tx, note_ids: Sequence[str]) -> list[tuple[str, Entity, float]]:
    """(note id, entity, confidence) for each entity each note mentions and readers show (a topic once it recurs),
    an alias as the entity it was merged into, once per note with the best confidence of the two."""
    rows = [(m.note_id, m.entity, m.confidence) for m in tx.mentions(note_ids=note_ids) if m.entity] if note_ids else []
    into = {e.key: e for e in tx.entities(keys=sorted({e.alias_of for _, e, _ in rows if e.alias_of}))}
    best: dict[tuple[str, str], tuple[str, Entity, float]] = {}
    for note_id, entity, confidence in rows:
        entity = into.get(entity.alias_of or "", entity)
        if shown(entity) and confidence > best.get((note_id, entity.key), ("", entity, -1.0))[2]:
            best[(note_id, entity.key)] = (note_id, entity, confidence)
    return list(best.values())


def merged_into(tx: Tx, keys: Iterable[str]) -> dict[str, Entity]:
    """Each of these entity keys (of entities that exist) as the entity it was merged into, else itself."""
    found = tx.entities(keys=sorted(set(keys)))
    into = {e.key: e for e in tx.entities(keys=sorted({e.alias_of for e in found if e.alias_of}))}
    return {e.key: into.get(e.alias_of or "", e) for e in found}


def _entities(tx: Tx, keys: Sequence[str], moment: _Moment | None) -> list[Entity]:
    """The entities of `keys` that exist (held then, with a moment), in the order asked."""
    found = tx.entities(keys=keys) if keys else []
    return found if moment is None else moment.entities(tx, found)


def _extracted_again(tx: Tx, notes: Sequence[Note], found: Sequence[Sequence[Mention]], version: str | None) -> None:
    """Notes' mentions replaced by those `found`. The kind found now replaces the one an older extractor gave (a
    `thing`, or a place it took for a person), but never a speaker's: a speaker is a person."""
    rows = [row for note, mentions in zip(notes, found, strict=True)
            for row in mention_rows(note.id, mentions, note.event_time or note.created_at or validation.now())]
    speakers = {entity_key(name, kind="person") for name in tx.speakers()[0]}
    kinds = {e.key: e.kind for e in tx.entities(keys=sorted({r.key for r in rows}))}
    retyped = [replace(r, sure=True) if r.key in kinds and kinds[r.key] != r.kind and r.key not in speakers else r
               for r in rows]
    tx.mention(retyped, replace=[n.id for n in notes], extracted=version)


def _listed(tx: Tx, moment: _Moment) -> list[Entity]:
    """Every entity held then, shown then (a topic that recurred by then) and not merged into another then, the most
    mentioned then first (as entity/list.cypher orders them now)."""
    counts = mentions_as_of(tx.mentions(), moment.at)
    keys = sorted(set(counts) | {key for r in moment.held for key in (r.alias, r.into)})
    then = [e for x in tx.entities(keys=keys) if (e := entity_as_of(x, counts, moment.held)) is not None]
    return sorted((e for e in then if e.alias_of is None and shown(e)), key=lambda e: (-e.mentions, e.key))


def _mentioned_by(tx: Tx, note_ids: Sequence[str], moment: _Moment | None) -> list[Entity]:
    """The entity of each mention of these notes (recorded by then, with a moment), in entity/of_notes.cypher's
    order."""
    if moment is None:
        return [m.entity for m in tx.mentions(note_ids=note_ids) if m.entity]
    rows = [m for m in tx.mentions(note_ids=note_ids) if m.at <= moment.at] if note_ids else []
    then = {e.key: e for e in moment.entities(tx, tx.entities(keys=sorted({m.key for m in rows})))}
    found = sorted(((m.note_id, then[m.key]) for m in rows if m.key in then),
                   key=lambda row: (row[0], row[1].mentions, row[1].key))
    return [entity for _, entity in found]


def _named(tx: Tx, name: str, tenant: str, moment: _Moment | None = None) -> Entity:
    """The entity a name resolves to by its keys (held then, with a moment), merged into another or not."""
    text = validation.text(name, "entity name", 500)
    keys = list(dict.fromkeys(k for k in (entity_key(text, kind="person"), entity_key(text)) if k))
    found = _entities(tx, keys, moment)
    if not found:
        then = f" as of {moment.at.isoformat()}" if moment is not None else ""
        raise EntityNotFound(f"no entity {name!r} in tenant {tenant!r}{then}")
    return found[0]


def _resolved(tx: Tx, name: str, tenant: str, moment: _Moment | None = None) -> Entity:
    """The entity a name resolves to, an alias taken as the entity it was merged into (then, with a moment)."""
    entity = _named(tx, name, tenant, moment)
    return _entities(tx, [entity.alias_of], moment)[0] if entity.alias_of else entity


def _merge(tx: Tx, alias: Entity, into: Entity, reason: str, by: MergeBy) -> EntityMerge:
    """The rules of a merge, checked in the transaction that writes it."""
    if alias.key == into.key:
        raise InvalidInput(f"{alias.name!r} and {into.name!r} are one entity already")
    if alias.alias_of:
        raise InvalidInput(f"{alias.name!r} is merged into {alias.alias_of!r} already: unmerge it first")
    if alias.merged:
        raise InvalidInput(
            f"{alias.name!r} has entities merged into it ({', '.join(alias.merged)}): merge those into "
            f"{into.name!r} first, or unmerge them"
        )
    tx.alias(alias.key, into.key, reason=reason, by=by)
    event("entity_merged", logging.INFO, tenant=alias.tenant, alias=alias.key, into=into.key, by=by, reason=reason)
    return next(m for m in tx.merges(into.key) if m.alias == alias.key)


__all__ = ["Entities", "EntityProfile", "MergeSuggestion"]
