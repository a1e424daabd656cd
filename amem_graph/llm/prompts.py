"""Every prompt the engine sends, in one place and versioned: a change of wording bumps PROMPT_VERSION,
which each Evolution records, so answers can be traced to the prompt that produced them."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..models import LINK_TYPES, NoteInput, SearchHit

PROMPT_VERSION = "analysis-v3"
MAX_NOTE_CHARS = 4_000  # the new note, in the prompt
MAX_CANDIDATE_CHARS = 240  # each candidate's content (and context), in the prompt
MAX_ANSWER_TOKENS = 600
_STAMP = re.compile(r"^\s*\[[^\]]{0,80}\]\s*")

ANALYSIS_SYSTEM = f"""Zettelkasten memory. Analyse NEW against the CANDIDATES (c1..cN). Return JSON:
keywords: 3-6 key terms of NEW.
context: one sentence: what NEW is about, who, when.
tags: 2-5 lowercase topic tags.
links: NEW to related candidates: target_id, type ({"|".join(sorted(LINK_TYPES))}), reason naming the shared evidence, confidence 0-1. CONTRADICTS only if NEW makes the candidate untrue.
neighbour_updates: candidates whose context or tags NEW changes: id, context (new sentence or null), add_tags, remove_tags, reason. Only for real new information.
entities: the people, pets, places and things NEW names."""


# A worked example, sent before the note when AMEM_LLM_EXAMPLES is on: small local models copy the instructions
# into the answer without it, and follow the answer's shape with it. Large models need no example.
ANALYSIS_EXAMPLE_USER = """NEW: Alice: My beagle Max learned to fetch the red ball today!
CANDIDATES:
c1: Alice: We adopted a beagle puppy named Max last spring.
c2: Bob: I started a new job at the bakery downtown."""
ANALYSIS_EXAMPLE_ANSWER = json.dumps({
    "keywords": ["beagle", "Max", "fetch", "red ball"],
    "context": "Alice says her beagle Max learned to fetch a red ball.", "tags": ["pets", "dog training"],
    "links": [{"target_id": "c1", "type": "ELABORATES", "reason": "both about Alice's beagle Max", "confidence": 0.9}],
    "neighbour_updates": [], "entities": ["Alice", "Max"],
})


def _strings() -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}}


def _object(**properties: Any) -> dict[str, Any]:
    """A strict JSON-schema object (what structured output asks for): every property required, no other."""
    return {"type": "object", "additionalProperties": False, "required": list(properties), "properties": properties}


_LINK = _object(
    target_id={"type": "string"}, type={"type": "string", "enum": sorted(LINK_TYPES)}, reason={"type": "string"},
    confidence={"type": "number"},
)
_UPDATE = _object(
    id={"type": "string"}, context={"type": ["string", "null"]}, add_tags=_strings(), remove_tags=_strings(),
    reason={"type": "string"},
)
ANALYSIS_SCHEMA = _object(
    keywords=_strings(), context={"type": "string"}, tags=_strings(), links={"type": "array", "items": _LINK},
    neighbour_updates={"type": "array", "items": _UPDATE}, entities=_strings(),
)


def handle(position: int) -> str:
    """Candidates are shown as c1..cN: short handles cost fewer tokens than ids and cannot be half-copied."""
    return f"c{position + 1}"


def analysis_messages(
    note: NoteInput, candidates: Sequence[SearchHit], *, example: bool = False
) -> list[dict[str, str]]:
    lines = [f"NEW: {_text(note.content, note.event_time, MAX_NOTE_CHARS)}", "CANDIDATES:" if candidates else "CANDIDATES: none"]
    for position, hit in enumerate(candidates):
        other = hit.note
        parts = [f"{handle(position)}: {_text(other.content, other.event_time, MAX_CANDIDATE_CHARS)}"]
        if other.context:
            parts.append(f"context: {other.context[:MAX_CANDIDATE_CHARS]}")
        if other.tags:
            parts.append("tags: " + ", ".join(other.tags))
        lines.append(" | ".join(parts))
    shown = [{"role": "user", "content": ANALYSIS_EXAMPLE_USER}, {"role": "assistant", "content": ANALYSIS_EXAMPLE_ANSWER}]
    return [
        {"role": "system", "content": ANALYSIS_SYSTEM}, *(shown if example else []),
        {"role": "user", "content": "\n".join(lines)},
    ]


def _text(content: str, when: datetime | None, limit: int) -> str:
    """A note as the prompt shows it: a leading time stamp becomes the shorter ISO date of its event time."""
    if when is None:
        return content[:limit]
    return f"({when:%Y-%m-%d}) {_STAMP.sub('', content, count=1)[:limit]}"


QA_PROMPT_VERSION = "qa-v1"
QA_SYSTEM = """Answer the question from the memories only, in a short phrase (a name, a date, a few words).
Dates: give the date the memory's time stamp implies (e.g. "the week before 9 June 2023").
If the memories do not say, answer exactly "Not mentioned". Return JSON: {"answer": "..."}"""
QA_SCHEMA = _object(answer={"type": "string"})


def qa_messages(question: str, memories: str) -> list[dict[str, str]]:
    """A question over the prompt block that `AgenticMemory.context` gives."""
    return [
        {"role": "system", "content": QA_SYSTEM},
        {"role": "user", "content": f"{memories}\n\nQuestion: {question[:MAX_NOTE_CHARS]}"},
    ]


# -- MemoryOS tiers ------------------------------------------------------------------------------------

TIERS_PROMPT_VERSION = "tiers-v1"
MAX_PAGE_CHARS = 1_500  # each side of a turn, in a prompt

TURN_SYSTEM = """Dialogue memory. Decide whether NEW continues the topic of PREVIOUS (same conversation thread).
Return JSON: continues (true/false); chain_summary: one short sentence summing up the thread so far (with NEW,
if it continues; else NEW alone); keywords: 3-6 key terms of NEW."""
TURN_SCHEMA = _object(continues={"type": "boolean"}, chain_summary={"type": "string"}, keywords=_strings())

SEGMENT_SYSTEM = """Topic memory. SUMMARY sums up a topic of past dialogue; NEW is a turn that joins it.
Return JSON: summary: the topic's summary including what NEW adds (at most 3 sentences, keep names, dates,
numbers); keywords: 3-8 key terms of the topic."""
SEGMENT_SCHEMA = _object(summary={"type": "string"}, keywords=_strings())

PERSONA_SYSTEM = """Long-term personal memory. From the dialogue PAGES (p1..pN), extract lasting facts:
profile: what the user is, has, likes, does (one fact per item, e.g. "Has a beagle named Max");
user_knowledge: facts about the world the user told;
assistant_knowledge: what the assistant said it did, knows or committed to for this user.
Return JSON: facts: [{kind (profile|user_knowledge|assistant_knowledge), text (one short sentence), page
(the handle it came from), confidence 0-1}]. Only facts stated in the pages; none is fine."""
_FACT = _object(
    kind={"type": "string", "enum": ["profile", "user_knowledge", "assistant_knowledge"]}, text={"type": "string"},
    page={"type": "string"}, confidence={"type": "number"},
)
PERSONA_SCHEMA = _object(facts={"type": "array", "items": _FACT})

RESPOND_SYSTEM = """You are a helpful assistant with a memory of this user. Use the MEMORY below where it helps;
do not mention it unless asked. Return JSON: {"reply": "..."}"""
RESPOND_SCHEMA = _object(reply={"type": "string"})


ALIAS_PROMPT_VERSION = "alias-v1"
ALIAS_SYSTEM = """Entity memory. Each PAIR (a1..aN) gives two names found in one person's notes, with a line each
was mentioned in. Return JSON: same: the handles of the pairs whose two names are the same person, pet, place
or thing. Leave out any pair you are not sure of."""
ALIAS_SCHEMA = _object(same=_strings())
MAX_ALIAS_PAIRS = 20  # pairs in one request
MAX_ALIAS_LINE_CHARS = 160


def alias_handle(position: int) -> str:
    return f"a{position + 1}"


def alias_messages(pairs: Sequence[tuple[str, str, str, str]]) -> list[dict[str, str]]:
    """`pairs`: (name, a line mentioning it, other name, a line mentioning that)."""
    lines = ["PAIRS:"]
    for position, (name, line, other, other_line) in enumerate(pairs):
        lines.append(f"{alias_handle(position)}: {name!r} ({_flat(line)}) / {other!r} ({_flat(other_line)})")
    return [{"role": "system", "content": ALIAS_SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def _flat(text: str) -> str:
    return " ".join(text.split())[:MAX_ALIAS_LINE_CHARS]


def page_handle(position: int) -> str:
    return f"p{position + 1}"


def _turn(user_text: str, assistant_text: str) -> str:
    parts = [f"user: {user_text[:MAX_PAGE_CHARS]}"] if user_text else []
    if assistant_text:
        parts.append(f"assistant: {assistant_text[:MAX_PAGE_CHARS]}")
    return " | ".join(parts)


def turn_messages(new: tuple[str, str], previous: tuple[str, str] | None, chain_summary: str) -> list[dict[str, str]]:
    lines = [f"PREVIOUS: {_turn(*previous)}" if previous else "PREVIOUS: none"]
    if previous and chain_summary:
        lines.append(f"THREAD SO FAR: {chain_summary[:MAX_PAGE_CHARS]}")
    lines.append(f"NEW: {_turn(*new)}")
    return [{"role": "system", "content": TURN_SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def segment_messages(summary: str | None, new: tuple[str, str]) -> list[dict[str, str]]:
    lines = [f"SUMMARY: {summary[:MAX_PAGE_CHARS]}" if summary else "SUMMARY: none (a new topic)", f"NEW: {_turn(*new)}"]
    return [{"role": "system", "content": SEGMENT_SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def persona_messages(pages: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    lines = ["PAGES:", *(f"{page_handle(i)}: {_turn(*page)}" for i, page in enumerate(pages))]
    return [{"role": "system", "content": PERSONA_SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def respond_messages(query: str, memory: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": f"{RESPOND_SYSTEM}\n\nMEMORY:\n{memory}"},
        {"role": "user", "content": query[:MAX_NOTE_CHARS]},
    ]
