"""`bench network`: what the knowledge network of a conversation looks like to a person, measured. Per
conversation and set: versions a note and their reasons, entities per 100 turns and the share of mentions that go
to a common word, notes with near-duplicate tags, and how often two turns cited as evidence of one question (in
different sessions) are joined by a link, within two links or by an entity, against every pair of turns of
different sessions."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from ..api import AgenticMemory
from ..core.english import common_word
from ..core.text import word_key
from ..errors import InvalidInput
from ..ingest import locomo
from ..models import Note, NoteHistory, NoteVersion
from .locomo_recall import _set_names, ingest, tenant_of

_VISIBLE = ("content", "context", "keywords", "tags", "category", "importance", "event_time")
_ID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


def run(
    memory: AgenticMemory, data: Sequence[Path], *, conversations: Sequence[str] | None = None,
    turns: int | None = None, prefix: str = "locomo-",
) -> dict[str, Any]:
    """Each set's conversations ingested as `bench locomo` ingests them (a tenant that holds them is reused),
    then measured; a summary per set over its conversations."""
    sets = {}
    for name, path in zip(_set_names(data), data, strict=True):
        every = locomo.load(path)
        chosen = [c for c in every if conversations is None or c.get("sample_id") in conversations]
        measured = {}
        for conversation in chosen:
            tenant = tenant_of(prefix, conversation)
            notes = locomo.turns(conversation)[:turns]
            ingest(memory, tenant, notes)
            measured[str(conversation["sample_id"])] = measure(memory, tenant, conversation)
        if measured:
            sets[name] = {"conversations": measured, "overall": overall(list(measured.values()))}
    if conversations is not None:
        held = {c for s in sets.values() for c in s["conversations"]}
        if unknown := set(conversations) - held:
            raise InvalidInput(f"no data file holds the conversations {sorted(unknown)}")
    return {"sets": sets, "analyser": memory.analyser.kind, "entities": memory.entities.extractor,
            "store": memory.admin.kind}


def measure(memory: AgenticMemory, tenant: str, conversation: dict[str, Any]) -> dict[str, Any]:
    histories = [memory.history(note.id, tenant=tenant) for note in _every_note(memory, tenant)]
    notes = [h.note for h in histories]
    mentions = {note.id: {e.key for e, _ in memory.entities.of_note(note.id, tenant=tenant)} for note in notes}
    return {
        "turns": len(notes),
        **_versions(histories),
        **_entities(memory, tenant, len(notes)),
        **_tags(notes),
        "co_evidence": _co_evidence(notes, mentions, conversation),
    }


def _every_note(memory: AgenticMemory, tenant: str) -> list[Note]:
    out: list[Note] = []
    while page := memory.list(tenant=tenant, limit=1000, offset=len(out), include_superseded=True,
                              include_archived=True):
        out += page
    return out


def _versions(histories: Sequence[NoteHistory]) -> dict[str, Any]:
    """Versions a note (1 for a note never revised), why each revision was made (its reason's first words, ids
    left out), and how many changed nothing a person sees (only derived text such as the neighbourhood)."""
    reasons: Counter[str] = Counter()
    examples: dict[str, str] = {}
    derived_only = 0
    for history in histories:
        states: list[NoteVersion | Note] = [*history.versions, history.note]
        for old, new in zip(states, states[1:], strict=False):
            assert isinstance(old, NoteVersion)
            kind = _reason_kind(old.reason)
            reasons[kind] += 1
            examples.setdefault(kind, old.reason)
            derived_only += all(getattr(old, f) == getattr(new, f) for f in _VISIBLE)
    revisions = sum(reasons.values())
    return {
        "versions_per_note": round(sum(h.note.version for h in histories) / len(histories), 3) if histories else None,
        "revisions": revisions,
        "revisions_derived_only": derived_only,
        "reasons": dict(reasons.most_common()),
        "reason_examples": examples,
        "reasons_naming_an_id": sum(1 for h in histories for v in h.versions if _ID.search(v.reason)),
    }


def _reason_kind(reason: str) -> str:
    # The first word names the kind ("tags", "update", "neighbourhood:"); what follows quotes the notes' words.
    head = reason.split(maxsplit=1)[0].rstrip(":") if reason.strip() else ""
    return _ID.sub("<id>", head).lower() or "(none)"


def _entities(memory: AgenticMemory, tenant: str, turns: int) -> dict[str, Any]:
    entities = []
    while page := memory.entities.list(tenant=tenant, limit=1000, offset=len(entities)):
        entities += page
    mentions = sum(e.mentions for e in entities)
    common = sum(e.mentions for e in entities if common_word(e.name))
    kinds = Counter(e.kind for e in entities)
    return {
        "entities": len(entities),
        "entities_per_100_turns": round(100 * len(entities) / turns, 1) if turns else None,
        "entity_kinds": dict(kinds.most_common()),
        "mentions": mentions,
        "common_word_mention_share": round(common / mentions, 3) if mentions else None,
        "top_entities": [f"{e.name} ({e.kind}, {e.mentions})" for e in entities[:12]],
    }


def _tags(notes: Sequence[Note]) -> dict[str, Any]:
    """Notes whose tags (or keywords) hold two forms of one word, and the tenant's tag forms per word."""
    duplicated = 0
    forms: dict[str, set[str]] = defaultdict(set)
    for note in notes:
        for tag in note.tags:
            forms[word_key(tag)].add(tag)
        duplicated += any(len({word_key(t) for t in values}) < len(set(values)) for values in (note.tags, note.keywords))
    return {
        "near_duplicate_tag_share": round(duplicated / len(notes), 3) if notes else None,
        "tag_forms_per_word": round(sum(len(f) for f in forms.values()) / len(forms), 3) if forms else None,
    }


def _co_evidence(notes: Sequence[Note], mentions: dict[str, set[str]], conversation: dict[str, Any]) -> dict[str, Any]:
    """Pairs of turns cited as evidence of one question, in different sessions: the share joined by a link, within
    two links, and by an entity both mention (a speaker left out: every turn of theirs would share them), against
    every pair of turns of different sessions (counted exactly); lift = evidence share / that share."""
    by_source = {str(n.source): n for n in notes}
    session = {n.id: n.session for n in notes}
    neighbours: dict[str, set[str]] = defaultdict(set)
    for note in notes:
        for link in note.links:
            if link.invalid_at is None and link.source_id in session and link.target_id in session:
                neighbours[link.source_id].add(link.target_id)
                neighbours[link.target_id].add(link.source_id)
    speakers = {n.speaker.casefold() for n in notes if n.speaker}
    named = {i: {k for k in keys if k not in speakers} for i, keys in mentions.items()}
    evidence: set[tuple[str, str]] = set()
    for question in locomo.questions(conversation, Counter(), set(by_source)):
        for x, y in combinations(sorted(question.evidence), 2):
            a, b = by_source[x], by_source[y]
            if a.session != b.session:
                evidence.add((a.id, b.id) if a.id < b.id else (b.id, a.id))
    found = [_joined(a, b, neighbours, named) for a, b in sorted(evidence)]
    chance = _every_pair(notes, session, neighbours, named)
    out: dict[str, Any] = {"pairs": len(found), "all_pairs": chance["pairs"]}
    for i, name in enumerate(("one_hop", "two_hops", "shared_entity")):
        share = sum(f[i] for f in found) / len(found) if found else None
        base = chance[name] / chance["pairs"] if chance["pairs"] else None
        out[name] = {"evidence": _r(share), "random": _r(base, 5),
                     "lift": _r(share / base) if share is not None and base else None}
    return out


def _joined(a: str, b: str, neighbours: dict[str, set[str]], named: dict[str, set[str]]) -> tuple[bool, bool, bool]:
    direct = b in neighbours[a]
    return direct, direct or bool(neighbours[a] & neighbours[b]), bool(named[a] & named[b])


def _every_pair(
    notes: Sequence[Note], session: dict[str, str | None], neighbours: dict[str, set[str]],
    named: dict[str, set[str]],
) -> dict[str, int]:
    """How many pairs of notes of different sessions there are, and how many of them each join counts."""
    ids = sorted(session)
    sizes = Counter(session.values())
    pairs = (len(ids) * (len(ids) - 1) - sum(c * (c - 1) for c in sizes.values())) // 2
    one = two = shared = 0
    by_entity: dict[str, set[str]] = defaultdict(set)
    for note_id, keys in named.items():
        for key in keys:
            by_entity[key].add(note_id)
    for a in ids:
        near = neighbours[a]
        reach = near.union(*(neighbours[x] for x in near)) - {a}
        one += sum(1 for b in near if b > a and session[b] != session[a])
        two += sum(1 for b in reach if b > a and session[b] != session[a])
        joined = set().union(*(by_entity[k] for k in named.get(a, ()))) - {a}
        shared += sum(1 for b in joined if b > a and session[b] != session[a])
    return {"pairs": pairs, "one_hop": one, "two_hops": two, "shared_entity": shared}


def overall(measured: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A set's figures over its conversations: sums, and means weighted by turns (pairs for the lifts)."""
    turns = sum(m["turns"] for m in measured)
    reasons: Counter[str] = Counter()
    for m in measured:
        reasons.update(m["reasons"])

    def weighted(key: str) -> float | None:
        held = [(m[key], m["turns"]) for m in measured if m[key] is not None]
        return _r(sum(v * w for v, w in held) / sum(w for _, w in held)) if held else None

    out: dict[str, Any] = {
        "turns": turns,
        "versions_per_note": weighted("versions_per_note"),
        "revisions": sum(m["revisions"] for m in measured),
        "revisions_derived_only": sum(m["revisions_derived_only"] for m in measured),
        "reasons_naming_an_id": sum(m["reasons_naming_an_id"] for m in measured),
        "reasons": dict(reasons.most_common()),
        "entities_per_100_turns": _r(100 * sum(m["entities"] for m in measured) / turns) if turns else None,
        "common_word_mention_share": _r(
            sum((m["common_word_mention_share"] or 0) * m["mentions"] for m in measured)
            / max(1, sum(m["mentions"] for m in measured))),
        "near_duplicate_tag_share": weighted("near_duplicate_tag_share"),
        "co_evidence": {},
    }
    pairs = sum(m["co_evidence"]["pairs"] for m in measured)
    every = sum(m["co_evidence"]["all_pairs"] for m in measured)
    for name in ("one_hop", "two_hops", "shared_entity"):
        ev = [(m["co_evidence"][name], m["co_evidence"]["pairs"]) for m in measured if m["co_evidence"][name]["evidence"] is not None]
        share = sum(e["evidence"] * p for e, p in ev) / pairs if pairs else None
        base = sum((m["co_evidence"][name]["random"] or 0) * m["co_evidence"]["all_pairs"] for m in measured) / every \
            if every else None
        out["co_evidence"][name] = {"evidence": _r(share), "random": _r(base, 5),
                                    "lift": _r(share / base) if share is not None and base else None}
    out["co_evidence"]["pairs"] = pairs
    return out


def _r(value: float | None, places: int = 3) -> float | None:
    return None if value is None else round(value, places)
