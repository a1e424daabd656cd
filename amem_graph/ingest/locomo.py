"""Reading LoCoMo conversations (Maharana et al., ACL 2024) into notes: one note per dialogue turn."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
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
    if not isinstance(data, list) or not all(isinstance(c, dict) and isinstance(c.get("conversation"), dict)
                                              for c in data):
        raise InvalidInput(f"{path} is not LoCoMo data: expected a list of conversations, each with a `conversation`")
    if not data:
        raise InvalidInput(f"{path} holds no conversation")
    return data


def pick(conversations: list[dict[str, Any]], sample_id: str | None) -> dict[str, Any]:
    if not conversations:
        raise InvalidInput("the data holds no conversation")
    if sample_id is None:
        return conversations[0]
    for conversation in conversations:
        if conversation.get("sample_id") == sample_id:
            return conversation
    known = ", ".join(str(c.get("sample_id")) for c in conversations)
    raise InvalidInput(f"no conversation {sample_id!r} in the data (it has {known})")


def turns(conversation: dict[str, Any]) -> list[NoteInput]:
    """One note per turn, in order: `<speaker>: <text>` (a shared image's caption after it), event time from the
    session's date-time (what was said holds no date: the note's event time does), source the turn's dia_id,
    session "session_<n>". Data of another shape (a turn without `dia_id`, a date that is not one) is refused
    with InvalidInput naming the session and turn."""
    dialogue = conversation.get("conversation")
    if not isinstance(dialogue, dict):
        raise InvalidInput("a LoCoMo conversation needs a `conversation` object of sessions")
    notes: list[NoteInput] = []
    for session in sorted((k for k in dialogue if k.startswith("session_") and k.split("_")[1].isdigit()
                           and not k.endswith("date_time")), key=lambda k: int(k.split("_")[1])):
        when = _session_time(session, dialogue.get(f"{session}_date_time", ""))
        said = dialogue[session]
        if not isinstance(said, list):
            raise InvalidInput(f"{session} is not a list of turns")
        for position, turn in enumerate(said, start=1):
            notes.append(_turn(session, position, turn, when))
    return notes


def _session_time(session: str, stamp: Any) -> datetime | None:
    if not stamp:
        return None
    try:
        return datetime.strptime(str(stamp), DATE_FORMAT).replace(tzinfo=timezone.utc)
    except ValueError:
        raise InvalidInput(f"{session}_date_time {str(stamp)[:60]!r} is not a LoCoMo date-time "
                           "(like '1:56 pm on 8 May, 2023')") from None


def _turn(session: str, position: int, turn: Any, when: datetime | None) -> NoteInput:
    """One turn as a note; a turn without its speaker, text or dia_id (or with them not text) is refused."""
    where = f"{session} turn {position}"
    if not isinstance(turn, dict):
        raise InvalidInput(f"{where} is not an object")
    missing = [key for key in ("speaker", "dia_id") if not isinstance(turn.get(key), str) or not turn[key]]
    if not isinstance(turn.get("text", ""), str) or not (turn.get("text") or turn.get("blip_caption")):
        missing.append("text")
    if missing:
        raise InvalidInput(f"{where} has no {', '.join(missing)} (each turn needs speaker, text and dia_id as text)")
    text = turn.get("text") or ""
    if caption := turn.get("blip_caption"):
        text = f"{text} [shares a photo: {caption}]"
    return NoteInput(content=f"{turn['speaker']}: {text}", source=turn["dia_id"], event_time=when, session=session,
                     speaker=turn["speaker"])


def documents(conversation: dict[str, Any]) -> dict[str, str]:
    """Each turn as the data README indexes it for its flat baselines: `[<session date-time>] <speaker>: <text>`,
    by dia_id."""
    dialogue = conversation["conversation"]
    return {
        str(note.source): f"[{dialogue.get(f'{note.session}_date_time', '')}] {note.content}"
        for note in turns(conversation)
    }


CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


@dataclass(frozen=True)
class Question:
    conversation: str
    category: int
    question: str
    answer: str | None  # most adversarial (category 5) items have none
    evidence: tuple[str, ...]  # dia_ids of the turns that hold the answer, repaired
    kind: str | None = None  # the data's own finer label where it has one (BEAM's `beam_type`)


def questions(
    conversation: dict[str, Any], dropped: Counter[str], known: set[str] | None = None
) -> list[Question]:
    """The conversation's questions with their evidence repaired (see the data README's quirks):
    "D8:6; D9:17" and space-separated lists are split, "D:11:26" and "D30:05" normalised. Evidence that
    names no turn of the conversation (or none of `known`, the turns ingested), and questions left
    without evidence, are counted in `dropped`."""
    known = known if known is not None else {str(note.source) for note in turns(conversation)}
    out: list[Question] = []
    for item in conversation.get("qa", []):
        evidence: dict[str, None] = {}
        for raw in item.get("evidence") or []:
            for piece in re.split(r"[;,\s]+", str(raw).strip()):
                if not piece:
                    continue
                match = _EVIDENCE.fullmatch(piece)
                if match is None:
                    dropped["malformed evidence"] += 1
                    continue
                dia_id = f"D{int(match.group(1))}:{int(match.group(2))}"
                if dia_id != piece:
                    dropped["repaired evidence"] += 1
                if dia_id not in known:
                    dropped["evidence naming no turn"] += 1
                    continue
                evidence[dia_id] = None
        if not evidence:
            dropped["questions without evidence"] += 1
            continue
        answer = item.get("answer", item.get("adversarial_answer"))
        out.append(
            Question(
                conversation=str(conversation.get("sample_id")), category=int(item["category"]),
                question=str(item["question"]), answer=None if answer is None else str(answer),
                evidence=tuple(evidence), kind=item.get("beam_type"),
            )
        )
    return out
