"""Reading files to ingest: JSON Lines of notes or of dialogue turns, and LoCoMo conversations. Every line is
checked before anything is written, and re-running an ingest resumes it: notes are idempotent (same source
and content), and a session's turns already held are skipped (turns are taken in file order)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from . import validation
from .bench import locomo
from .errors import InvalidInput
from .models import NoteInput

Format = Literal["notes", "turns", "locomo"]
NOTE_FIELDS = {f.name for f in fields(NoteInput)}
TURN_FIELDS = {"user", "assistant", "session_id", "at"}


@dataclass(frozen=True)
class Turn:
    user: str
    assistant: str
    session_id: str
    at: datetime | None


def detect(path: Path) -> Format:
    """`locomo` for a .json file, else by the first line's fields: `content` → notes, `user`/`assistant` → turns."""
    if path.suffix == ".json":
        return "locomo"
    for _, record in _lines(path):
        return "turns" if {"user", "assistant"} & set(record) and "content" not in record else "notes"
    raise InvalidInput(f"{path} holds no record")


def notes(path: Path, max_chars: int, *, conversation: str | None = None) -> list[NoteInput]:
    """The notes of a JSONL file (one object per line with `content` and the optional NoteInput fields),
    or one turn per note of a LoCoMo conversation (source its dia_id)."""
    if path.suffix == ".json":
        return locomo.turns(locomo.pick(locomo.load(path), conversation))
    out = []
    for number, record in _lines(path):
        if set(record) - NOTE_FIELDS or "content" not in record:
            raise InvalidInput(f"line {number}: a note has `content` and only {sorted(NOTE_FIELDS)}; got {sorted(record)}")
        try:
            out.append(validation.note_input(NoteInput(**{
                **record, "keywords": tuple(record.get("keywords") or ()), "tags": tuple(record.get("tags") or ()),
            }), max_chars))
        except (InvalidInput, TypeError) as err:
            raise InvalidInput(f"line {number}: {err}") from None
    return out


def turns(path: Path, max_chars: int) -> list[Turn]:
    """The dialogue turns of a JSONL file: `user`, `assistant` (either may be missing, not both),
    `session_id` (default "default"), `at` (ISO-8601)."""
    out = []
    for number, record in _lines(path):
        user, assistant = record.get("user") or "", record.get("assistant") or ""
        try:
            if set(record) - TURN_FIELDS:
                raise InvalidInput(f"a turn has only {sorted(TURN_FIELDS)}; got {sorted(record)}")
            user = validation.text(user, "user", max_chars, allow_empty=True)
            assistant = validation.text(assistant, "assistant", max_chars, allow_empty=True)
            if not (user.strip() or assistant.strip()):
                raise InvalidInput("a turn needs text on at least one side")
            session = validation.text(record.get("session_id", "default"), "session_id", 200)
            out.append(Turn(user, assistant, session, validation.event_time(record.get("at"))))
        except InvalidInput as err:
            raise InvalidInput(f"line {number}: {err}") from None
    return out


def pending_turns(all_turns: Sequence[Turn], held: dict[str, int]) -> list[Turn]:
    """The turns still to add: per session, those after the `held` pages it has already."""
    seen: dict[str, int] = {}
    out = []
    for turn in all_turns:
        seen[turn.session_id] = seen.get(turn.session_id, 0) + 1
        if seen[turn.session_id] > held.get(turn.session_id, 0):
            out.append(turn)
    return out


def _lines(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise InvalidInput(f"cannot read {path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise InvalidInput(f"{path} is not UTF-8 (byte {err.start})") from None
    yield from validation.json_lines(text.splitlines())
