"""Reading files to ingest: JSON Lines of notes or of dialogue turns, and LoCoMo conversations (`locomo`). Every line is
checked before anything is written, and re-running an ingest resumes it: notes are idempotent (same source
and content), and a session's turns already held are skipped (turns are taken in file order)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from ..core import validation
from ..errors import InvalidInput
from ..models import NoteInput
from . import locomo

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
    for _, line in _numbered(path):  # the first record that reads as one (a broken line may be skipped)
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            return "turns" if {"user", "assistant"} & set(record) and "content" not in record else "notes"
    raise InvalidInput(f"{path} holds no record")


def notes(
    path: Path, max_chars: int, *, conversation: str | None = None,
    on_invalid: Callable[[int, InvalidInput], None] | None = None,
) -> list[NoteInput]:
    """The checked notes of a JSONL file (one object per line with `content` and the optional NoteInput fields),
    or one turn per note of a LoCoMo conversation (source its dia_id). The first invalid record raises, with
    its line or turn; with `on_invalid`, it is handed to that and left out (validation.each)."""
    if path.suffix == ".json":
        turns = locomo.turns(locomo.pick(locomo.load(path), conversation))
        return validation.each(turns, lambda note, _: _turn_note(note, max_chars), on_invalid)
    return validation.each(list(_numbered(path)), lambda line, _: _note(*line, max_chars), on_invalid)


def _record(number: int, line: str, kind: str, fields: set[str], required: str | None = None) -> dict[str, Any]:
    """One line as a JSON object of `fields` only (with `required`), or InvalidInput naming the line."""
    try:
        record = json.loads(line)
    except ValueError as err:
        raise InvalidInput(f"line {number} is not JSON: {err}") from None
    if not isinstance(record, dict) or set(record) - fields or (required and required not in record):
        got = sorted(record) if isinstance(record, dict) else type(record).__name__
        needs = f"`{required}` and " if required else ""
        raise InvalidInput(f"line {number}: a {kind} has {needs}only {sorted(fields)}; got {got}")
    return record


def _note(number: int, line: str, max_chars: int) -> NoteInput:
    record = _record(number, line, "note", NOTE_FIELDS, "content")
    if record.get("event_time") is None and isinstance(record["content"], str):
        when, said = dated(record["content"])
        if when is not None:
            record = {**record, "content": said, "event_time": when}
    try:
        return validation.note_input(NoteInput(**{
            **record, "keywords": tuple(record.get("keywords") or ()), "tags": tuple(record.get("tags") or ()),
        }), max_chars)
    except (InvalidInput, TypeError) as err:
        raise InvalidInput(f"line {number}: {err}") from None


_STAMP = re.compile(r"^\s*\[([^\]]{1,80})\]\s*")


def dated(content: str) -> tuple[datetime | None, str]:
    """A note's leading time stamp ("[1:56 pm on 8 May, 2023] Gina: ..." or an ISO-8601 one) as its event time,
    and what was said without it; (None, content) when it has none. What was said holds no date."""
    match = _STAMP.match(content)
    if match is None:
        return None, content
    try:
        when = datetime.strptime(match.group(1).strip(), locomo.DATE_FORMAT).replace(tzinfo=timezone.utc)
    except ValueError:
        try:
            when = validation.event_time(match.group(1).strip())
        except InvalidInput:
            return None, content
    return when, content[match.end():] or content


def _turn_note(note: NoteInput, max_chars: int) -> NoteInput:
    try:
        return validation.note_input(note, max_chars)
    except InvalidInput as err:
        raise InvalidInput(f"turn {note.source}: {err}") from None


def turns(path: Path, max_chars: int, *, on_invalid: Callable[[int, InvalidInput], None] | None = None) -> list[Turn]:
    """The dialogue turns of a JSONL file: `user`, `assistant` (either may be missing, not both),
    `session_id` (default "default"), `at` (ISO-8601). Invalid lines as in `notes`."""
    return validation.each(list(_numbered(path)), lambda line, _: _turn(*line, max_chars), on_invalid)


def _turn(number: int, line: str, max_chars: int) -> Turn:
    record = _record(number, line, "turn", TURN_FIELDS)
    try:
        user = validation.text(record.get("user") or "", "user", max_chars, allow_empty=True)
        assistant = validation.text(record.get("assistant") or "", "assistant", max_chars, allow_empty=True)
        if not (user.strip() or assistant.strip()):
            raise InvalidInput("a turn needs text on at least one side")
        session = validation.text(record.get("session_id", "default"), "session_id", 200)
        return Turn(user, assistant, session, validation.event_time(record.get("at")))
    except InvalidInput as err:
        raise InvalidInput(f"line {number}: {err}") from None


def exchanges(notes: Sequence[NoteInput], session: str = "default") -> list[Turn]:
    """Notes said one after another as dialogue turns for the tiers: in each session, in order, each pair of
    consecutive notes one turn (the first as the user's side, the reply as the other), a last note alone as a turn of
    its own; the turn's time the first note's event time. Notes without a session form `session`."""
    by_session: dict[str, list[NoteInput]] = {}
    for note in notes:
        by_session.setdefault(note.session or session, []).append(note)
    out = []
    for session_id, said in by_session.items():
        for first in range(0, len(said), 2):
            reply = said[first + 1].content if first + 1 < len(said) else ""
            out.append(Turn(said[first].content, reply, session_id, said[first].event_time))
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


def _numbered(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each non-blank line."""
    return ((number, line) for number, line in enumerate(_read(path).splitlines(), start=1) if line.strip())


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise InvalidInput(f"cannot read {path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise InvalidInput(f"{path} is not UTF-8 (byte {err.start})") from None
