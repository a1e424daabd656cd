"""Entities as the memory held them at a moment (`as_of`, recorded time): one rule for both stores, from what
they keep (see amem_graph/core/timeline.py for notes).

A merge holds from when it was made until an unmerge ended it (`EntityMerge.ended_at`). An entity is held from
the first mention of it recorded by then, and its `mentions` count the notes whose mention of it was recorded by
then; its `alias_of` and `merged` are the merges held then. Its name never changes; its kind, its other names (`aliases`)
and `first_seen` / `last_seen` are today's: a mention keeps no history of them. An erased note is erased from
every time, with its mentions (and an entity only it mentioned, with that entity's merges).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from ..models import Entity, EntityMerge
from ..store.base import MentionRow


def merge_held(record: EntityMerge, at: datetime) -> bool:
    """Whether the merge held at `at`: made by then (an old record without a time, always) and not yet ended."""
    return (record.at is None or record.at <= at) and (record.ended_at is None or at < record.ended_at)


def merges_as_of(records: Iterable[EntityMerge], at: datetime) -> list[EntityMerge]:
    """The merges that held at `at`."""
    return [r for r in records if merge_held(r, at)]


def mentions_as_of(times: Iterable[MentionRow], at: datetime) -> Counter[str]:
    """Per entity key, the notes whose mention of it was recorded by `at` (an entity not counted was not held)."""
    return Counter(key for key, _ in {(t.key, t.note_id) for t in times if t.at <= at})


def entity_as_of(entity: Entity, mentions: Mapping[str, int], held: Sequence[EntityMerge]) -> Entity | None:
    """The entity as the memory held it, given the moment's mention counts and the merges `held` then; None if
    no mention of it was recorded by then and it took part in no merge then (a merge needs both entities, so
    one held then whose mentions of then were erased since is still held)."""
    count = mentions.get(entity.key, 0)
    into = next((r.into for r in held if r.alias == entity.key), None)
    merged = tuple(sorted(r.alias for r in held if r.into == entity.key))
    if count == 0 and into is None and not merged:
        return None
    return replace(entity, mentions=count, alias_of=into, merged=merged)


def merges_into(key: str, held: Sequence[EntityMerge]) -> list[EntityMerge]:
    """The merges into the entity `key` that held, oldest first (as `tx.merges` gives those that hold now)."""
    found = [replace(r, ended_at=None) for r in held if r.into == key]  # held then: not yet ended
    return sorted(found, key=lambda m: (m.at is None, m.at or datetime.min, m.alias))


__all__ = ["entity_as_of", "mentions_as_of", "merge_held", "merges_as_of", "merges_into"]
