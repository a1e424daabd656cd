"""Aliases: two entities that are one thing. The rules suggest pairs on clear evidence; with an LLM configured
the LLM decides which of them to merge. A merge is recorded (ALIAS_OF: when, why, who) and undone exactly
(`Entities.unmerge`): the mentions stay as written, reads take an alias as the entity it was merged into."""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.log import event
from ..errors import LLMError
from ..llm.client import LLMClient
from ..llm.prompts import ALIAS_SCHEMA, MAX_ALIAS_PAIRS, alias_handle, alias_messages
from ..models import Entity

_SPELLING = re.compile(r"[\s'’-]+")


@dataclass(frozen=True)
class MergeSuggestion:
    """`alias` could be merged into `into`; `evidence` says why."""

    alias: Entity
    into: Entity
    evidence: str

    def to_dict(self) -> dict[str, Any]:
        return {"alias": self.alias.to_dict(), "into": self.into.to_dict(), "evidence": self.evidence}


def suggestions(entities: Sequence[Entity]) -> list[MergeSuggestion]:
    """The pairs among `entities` that the evidence says are one thing: two spellings of the same letters
    ("ice-cream", "ice cream"), and a person's first name beside the only full name that starts with it
    ("Caroline", "Caroline Hill"). The entity mentioned less is the alias; each entity takes part once, so
    merges stay one level deep."""
    roots = [e for e in entities if e.alias_of is None]
    found: list[MergeSuggestion] = []
    spellings: dict[str, list[Entity]] = defaultdict(list)
    for entity in roots:
        spellings[_SPELLING.sub("", entity.key)].append(entity)
    for group in spellings.values():
        into = min(group, key=_rank)
        found += [MergeSuggestion(e, into, f"{e.name!r} and {into.name!r} are one spelling") for e in group if e is not into]
    people = [e for e in roots if e.kind == "person"]
    first_names = {e.key: e for e in people if " " not in e.key}
    full_names: dict[str, list[Entity]] = defaultdict(list)
    for entity in people:
        words = entity.key.split()
        if len(words) > 1 and all(w[:1].isupper() for w in entity.name.split()):
            full_names[words[0]].append(entity)
    for first, names in full_names.items():
        if first in first_names and len(names) == 1:
            short, full = first_names[first], names[0]
            alias, into = sorted((short, full), key=_rank)[::-1]
            found.append(MergeSuggestion(alias, into, f"{short.name!r} is the first name of the only full name {full.name!r}"))
    return _one_level(found)


def _rank(entity: Entity) -> tuple[int, int, str]:
    """The entity a pair keeps: the most mentioned, then the shorter key."""
    return (-entity.mentions, len(entity.key), entity.key)


def _one_level(found: Sequence[MergeSuggestion]) -> list[MergeSuggestion]:
    aliases: set[str] = set()
    kept: set[str] = set()
    out = []
    for s in found:
        if s.alias.key in aliases or s.alias.key in kept or s.into.key in aliases:
            continue
        aliases.add(s.alias.key)
        kept.add(s.into.key)
        out.append(s)
    return out


def decided(
    client: LLMClient, found: Sequence[MergeSuggestion], examples: Mapping[str, str]
) -> list[MergeSuggestion]:
    """The suggestions the LLM says are one thing, asked `MAX_ALIAS_PAIRS` at a time with a line mentioning each
    name (`examples`, by entity key). It can only pick among the pairs offered; an answer that fails or does
    not fit merges nothing of its batch."""
    chosen = []
    for start in range(0, len(found), MAX_ALIAS_PAIRS):
        batch = list(found[start: start + MAX_ALIAS_PAIRS])
        pairs = [(s.alias.name, examples.get(s.alias.key, ""), s.into.name, examples.get(s.into.key, "")) for s in batch]
        try:
            reply = client.complete_json("entity_alias", alias_messages(pairs), ALIAS_SCHEMA, max_tokens=200)
        except LLMError as err:
            event("entity_alias_degraded", kind=err.kind, error=str(err))
            continue
        same = reply.data.get("same")
        if not isinstance(same, list):
            client.count_failure("entity_alias")
            event("entity_alias_degraded", kind="malformed")
            continue
        handles = {alias_handle(i): s for i, s in enumerate(batch)}
        picked = {h for h in same if isinstance(h, str) and h in handles}
        if unknown := [h for h in same if h not in picked]:
            event("entity_alias_ignored", logging.INFO, handles=unknown[:10])
        chosen += [s for h, s in handles.items() if h in picked]
    return chosen


__all__ = ["MergeSuggestion", "decided", "suggestions"]
