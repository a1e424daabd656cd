"""Reading LoCoMo conversations (Maharana et al., ACL 2024) into notes: one note per dialogue turn."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..models import NoteInput

DATE_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"


def load(path: Path) -> list[dict[str, Any]]:
    """The conversations in a LoCoMo JSON file (a list of objects with `sample_id` and `conversation`)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise InvalidInput(f"cannot read LoCoMo data {path}: {err.strerror}") from None
    except ValueError as err:
        raise InvalidInput(f"{path} is not JSON: {err}") from None
    if not isinstance(data, list) or not all(isinstance(c, dict) and "conversation" in c for c in data):
        raise InvalidInput(f"{path} is not LoCoMo data: expected a list of conversations")
    return data


def pick(conversations: list[dict[str, Any]], sample_id: str | None) -> dict[str, Any]:
    if sample_id is None:
        return conversations[0]
    for conversation in conversations:
        if conversation.get("sample_id") == sample_id:
            return conversation
    known = ", ".join(str(c.get("sample_id")) for c in conversations)
    raise InvalidInput(f"no conversation {sample_id!r} in the data (it has {known})")


def turns(conversation: dict[str, Any]) -> list[NoteInput]:
    """One note per turn, in order: `[<session date-time>] <speaker>: <text>`, event time from the
    session, source the turn's dia_id."""
    dialogue = conversation["conversation"]
    notes: list[NoteInput] = []
    for session in sorted((k for k in dialogue if k.startswith("session_") and k.split("_")[1].isdigit()
                           and not k.endswith("date_time")), key=lambda k: int(k.split("_")[1])):
        stamp = dialogue.get(f"{session}_date_time", "")
        when = datetime.strptime(stamp, DATE_FORMAT).replace(tzinfo=timezone.utc) if stamp else None
        for turn in dialogue[session]:
            text = turn["text"]
            if caption := turn.get("blip_caption"):
                text = f"{text} [shares a photo: {caption}]"
            notes.append(
                NoteInput(content=f"[{stamp}] {turn['speaker']}: {text}", source=turn["dia_id"], event_time=when)
            )
    return notes
