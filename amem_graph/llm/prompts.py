"""Every prompt the engine sends, in one place and versioned: a change of wording bumps PROMPT_VERSION,
which each Evolution records, so answers can be traced to the prompt that produced them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..models import LINK_TYPES, NoteInput, SearchHit

PROMPT_VERSION = "analysis-v1"
MAX_NOTE_CHARS = 4_000  # the new note, in the prompt
MAX_CANDIDATE_CHARS = 300  # each candidate's content, in the prompt
MAX_ANSWER_TOKENS = 600

ANALYSIS_SYSTEM = f"""You keep a Zettelkasten memory. Analyse the NEW note against the CANDIDATES (existing notes c1..cN). Answer one JSON object:
keywords: 3-6 salient terms of the new note (names, things, events), most important first.
context: one sentence: what it is about, who, when.
tags: 2-5 short lowercase topic tags.
links: from the new note to related candidates: target_id (c1..cN), type ({", ".join(sorted(LINK_TYPES))}), reason (name the shared evidence), confidence (0-1). CONTRADICTS only if the new note makes the candidate no longer true.
neighbour_updates: candidates whose context or tags the new note should change: id, context (new sentence, or null), add_tags, remove_tags, reason. Only for real new information.
Use only the candidate ids given."""


def _strings() -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}}


ANALYSIS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["keywords", "context", "tags", "links", "neighbour_updates"],
    "properties": {
        "keywords": _strings(),
        "context": {"type": "string"},
        "tags": _strings(),
        "links": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["target_id", "type", "reason", "confidence"],
                "properties": {
                    "target_id": {"type": "string"},
                    "type": {"type": "string", "enum": sorted(LINK_TYPES)},
                    "reason": {"type": "string"},
                    "confidence": {"type": "number"},
                },
            },
        },
        "neighbour_updates": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "context", "add_tags", "remove_tags", "reason"],
                "properties": {
                    "id": {"type": "string"},
                    "context": {"type": ["string", "null"]},
                    "add_tags": _strings(),
                    "remove_tags": _strings(),
                    "reason": {"type": "string"},
                },
            },
        },
    },
}


def handle(position: int) -> str:
    """Candidates are shown as c1..cN: short handles cost fewer tokens than ids and cannot be half-copied."""
    return f"c{position + 1}"


def analysis_messages(note: NoteInput, candidates: Sequence[SearchHit]) -> list[dict[str, str]]:
    lines = [f"NEW: {_when(note)}{note.content[:MAX_NOTE_CHARS]}", "CANDIDATES:" if candidates else "CANDIDATES: none"]
    for position, hit in enumerate(candidates):
        other = hit.note
        parts = [f"{handle(position)}: {other.content[:MAX_CANDIDATE_CHARS]}"]
        if other.context:
            parts.append(f"context: {other.context[:MAX_CANDIDATE_CHARS]}")
        if other.tags:
            parts.append("tags: " + ", ".join(other.tags))
        lines.append(" | ".join(parts))
    return [{"role": "system", "content": ANALYSIS_SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def _when(note: NoteInput) -> str:
    return f"[{note.event_time:%Y-%m-%d %H:%M}] " if note.event_time else ""
