"""What the notes of a tenant say about a person, place or thing (reach it as `memory.entities`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .. import validation
from ..errors import EntityNotFound, InvalidInput
from ..models import Entity, Note
from ..store.base import MemoryStore, Tx
from .extract import Extractor, extract, mention_rows, note_mentions
from .keys import entity_key

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

    def __init__(self, store: MemoryStore, tenant: str, extractor: Extractor | None) -> None:
        self._store = store
        self._tenant = tenant
        self._extractor = extractor

    @property
    def extractor(self) -> str:
        """Which extractor finds the entities of new notes: spacy, rules or off."""
        return self._extractor.name if self._extractor is not None else "off"

    def backfill(self, *, tenant: str | None = None, batch: int = 200) -> int:
        """Find the entities of every note of the tenant (notes from before schema 6 have none), `batch`
        notes per transaction; a note's mentions are written once however often this runs. Returns the
        notes read."""
        if batch < 1:
            raise InvalidInput(f"batch must be at least 1, got {batch}")
        tenant = self._of(tenant)
        offset = 0
        while notes := self._store.read(tenant, lambda tx: tx.notes(limit=batch, offset=offset)):
            rows = [
                row for note, found in zip(notes, note_mentions(notes, extract(self._extractor, notes)), strict=True)
                for row in mention_rows(note.id, found, note.event_time or note.created_at or validation.now())
            ]
            self._store.write(tenant, lambda tx: tx.mention(rows))
            offset += len(notes)
        return offset

    def list(self, *, tenant: str | None = None, limit: int = 50, offset: int = 0) -> list[Entity]:
        """The tenant's entities, the most mentioned first."""
        if limit < 0 or offset < 0:
            raise InvalidInput(f"limit and offset must be at least 0, got {limit} and {offset}")
        return self._store.read(self._of(tenant), lambda tx: tx.entities(limit=limit, offset=offset))

    def get(self, name: str, *, tenant: str | None = None) -> Entity:
        """The entity a name resolves to (as a person's name first, then as a thing's); EntityNotFound if none."""
        tenant = self._of(tenant)
        return self._store.read(tenant, lambda tx: _resolved(tx, name, tenant))

    def profile(self, name: str, *, tenant: str | None = None, limit: int = 100, related: int = 10) -> EntityProfile:
        """An entity with the newest `limit` notes that mention it, oldest first, and its `related` entities."""
        tenant = self._of(tenant)

        def read(tx: Tx) -> EntityProfile:
            entity = _resolved(tx, name, tenant)
            brief = [note for _, note, _ in tx.mentioning([entity.key], limit)]
            notes = tx.notes(ids=[n.id for n in brief])
            notes.sort(key=lambda n: (n.event_time or n.created_at or _EARLIEST, n.seq or 0, n.id))
            counts = Counter(e.key for _, e, _ in tx.mentioned_by([n.id for n in notes]) if e.key != entity.key)
            top = [key for key, _ in counts.most_common(related)]
            return EntityProfile(entity, tuple(notes), tuple((e, counts[e.key]) for e in tx.entities(keys=top)))

        return self._store.read(tenant, read)

    def of_note(self, note_id: str, *, tenant: str | None = None) -> list[tuple[Entity, float]]:
        """The entities a note mentions, with the confidence of each mention."""
        note_id = validation.note_id(note_id)
        rows = self._store.read(self._of(tenant), lambda tx: tx.mentioned_by([note_id]))
        return [(entity, confidence) for _, entity, confidence in rows]

    def _of(self, tenant: str | None) -> str:
        return validation.tenant(self._tenant if tenant is None else tenant)


def _resolved(tx: Tx, name: str, tenant: str) -> Entity:
    text = validation.text(name, "entity name", 500)
    keys = list(dict.fromkeys(k for k in (entity_key(text, kind="person"), entity_key(text)) if k))
    found = tx.entities(keys=keys) if keys else []
    if not found:
        raise EntityNotFound(f"no entity {name!r} in tenant {tenant!r}")
    return found[0]


__all__ = ["Entities", "EntityProfile"]
