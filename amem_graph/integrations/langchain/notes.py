"""Writing a note under an id the caller chose: the one way the adapters create or replace a note."""

from __future__ import annotations

from ...api import AgenticMemory
from ...errors import InvalidInput, NoteNotFound


def current_text(memory: AgenticMemory, tenant: str, note_id: str) -> str | None:
    try:
        return memory.get(note_id, tenant=tenant).content
    except NoteNotFound:
        return None


def upsert(memory: AgenticMemory, tenant: str, note_id: str, text: str, *, source: str, reason: str) -> None:
    """Add the note through the write path (analysed, linked, evolving), or, if the id is there, replace
    its text (the old one kept as a version). Two writers of one new id: the later replaces the earlier."""
    current = current_text(memory, tenant, note_id)
    if current is None:
        try:
            memory.add(text, tenant=tenant, id=note_id, source=source)
            return
        except InvalidInput:
            current = current_text(memory, tenant, note_id)
            if current is None:  # not a concurrent add of the same id: a real refusal
                raise
    if current != text:
        memory.update(note_id, tenant=tenant, content=text, reason=reason)
