"""Input checks that run before anything is written: a bad value is an InvalidInput, never a partial write."""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime, timezone
from typing import Any, TypeVar

from ..errors import InvalidInput
from ..models import LINK_TYPES, NoteChanges, NoteInput
from .text import split_speaker

T = TypeVar("T")
U = TypeVar("U")

TENANT_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}")
NOTE_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
# C0/C1 control characters other than tab, newline and carriage return.
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
MAX_LABEL_CHARS = 200
MAX_QUERY_CHARS = 4_000
MAX_LABELS = 100
MAX_COUNT = 2**53 - 1  # the largest count or offset taken: a whole number every store and JSON client carries exactly


def text(value: Any, what: str, max_chars: int, *, allow_empty: bool = False) -> str:
    """A clean UTF-8 string: bytes must decode strictly, no control characters, no lone surrogates."""
    if isinstance(value, bytes | bytearray):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError as err:
            raise InvalidInput(f"{what} is not valid UTF-8 (byte {err.start})") from None
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be text, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise InvalidInput(f"{what} is empty")
    if len(value) > max_chars:
        raise InvalidInput(f"{what} has {len(value)} characters; the limit is {max_chars}")
    if match := CONTROL_CHARS.search(value):
        raise InvalidInput(f"{what} contains control character U+{ord(match.group()):04X} at {match.start()}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise InvalidInput(f"{what} is not valid Unicode (lone surrogate at {err.start})") from None
    return value


def tenant(value: Any) -> str:
    if not isinstance(value, str) or not TENANT_PATTERN.fullmatch(value):
        raise InvalidInput(
            f"tenant {value!r} is not valid: 1-128 characters of letters, digits and _ . : @ -, "
            "starting with a letter or digit"
        )
    return value


def note_id(value: Any) -> str:
    if not isinstance(value, str) or not NOTE_ID_PATTERN.fullmatch(value):
        raise InvalidInput(f"note id {value!r} is not valid: 1-128 characters of letters, digits and _ . : -")
    return value


def labels(values: Iterable[Any] | None, what: str) -> tuple[str, ...]:
    """Keywords or tags: non-empty short strings, de-duplicated in order."""
    if values is None:
        return ()
    if isinstance(values, str | bytes):
        raise InvalidInput(f"{what} must be a list of strings, not one string")
    out: dict[str, None] = {}  # ordered set
    for item in values:
        out[text(item, f"a {what[:-1] if what.endswith('s') else what}", MAX_LABEL_CHARS).strip()] = None
        if len(out) > MAX_LABELS:
            raise InvalidInput(f"{what} has more than {MAX_LABELS} entries")
    return tuple(out)


def window(limit: Any, offset: Any, *, least: int = 1, most: int = MAX_COUNT) -> tuple[int, int]:
    """A page of a listing: `limit` a whole number from `least` to `most`, `offset` one from 0 to MAX_COUNT."""
    def whole(value: Any, low: int, high: int) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high

    if not whole(limit, least, most) or not whole(offset, 0, MAX_COUNT):
        raise InvalidInput(f"limit must be a whole number from {least} to {most} and offset one from 0 to {MAX_COUNT}, "
                           f"got {limit!r} and {offset!r}")
    return limit, offset


def unit_interval(value: Any, what: str) -> float:
    """A number from 0 to 1 (importance, confidence); booleans are not numbers here."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise InvalidInput(f"{what} must be a number from 0 to 1, got {value!r}")
    return float(value)


def event_time(value: Any, name: str = "event time") -> datetime | None:
    """A timezone-aware datetime (naive ones are taken as UTC) or an ISO-8601 string; `name` says which time
    in an error."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidInput(f"{name} {value!r} is not an ISO-8601 date-time") from None
    if not isinstance(value, datetime):
        raise InvalidInput(f"{name} must be a datetime, got {type(value).__name__}")
    value = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    try:
        # In UTC: what a store compares and keeps (Neo4j reads times back in UTC), and an offset Neo4j can take
        # (Python allows offsets up to a day, Neo4j up to 18 hours).
        utc = value.astimezone(timezone.utc)
    except OverflowError:
        raise InvalidInput(f"{name} {value.isoformat()} is out of range: in UTC it falls before year 1 or after "
                           "year 9999") from None
    return to_millis(utc)


def to_millis(value: datetime) -> datetime:
    """Times are kept to the millisecond, so what is stored is exactly what is read back."""
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def now() -> datetime:
    """The time a store stamps a write with: UTC, to the millisecond."""
    return to_millis(datetime.now(timezone.utc))


def link_type(value: Any) -> str:
    if value not in LINK_TYPES:
        raise InvalidInput(f"link type {value!r} is not one of {', '.join(sorted(LINK_TYPES))}")
    return str(value)


def vector(values: Sequence[float], dimension: int, what: str = "embedding") -> list[float]:
    """A finite vector of the index's dimension."""
    try:
        out = [float(v) for v in values]
    except (TypeError, ValueError):
        raise InvalidInput(f"{what} must be a sequence of numbers") from None
    if len(out) != dimension:
        raise InvalidInput(f"{what} has {len(out)} dimensions; the vector index has {dimension}")
    if not all(math.isfinite(v) for v in out):
        raise InvalidInput(f"{what} contains NaN or infinity")
    return out


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def note_input(item: NoteInput, max_chars: int) -> NoteInput:
    """A checked copy of a new note, with an id."""
    if not isinstance(item, NoteInput):
        raise InvalidInput(f"expected a NoteInput, got {type(item).__name__}")
    content = text(item.content, "content", max_chars)
    return NoteInput(
        content=content,
        source=None if item.source is None else text(item.source, "source", 500),
        keywords=labels(item.keywords, "keywords"),
        tags=labels(item.tags, "tags"),
        context=text(item.context, "context", max_chars, allow_empty=True),
        category=None if item.category is None else text(item.category, "category", MAX_LABEL_CHARS),
        importance=unit_interval(item.importance, "importance"),
        event_time=event_time(item.event_time),
        id=note_id(item.id) if item.id is not None else str(uuid.uuid4()),
        session=None if item.session is None else text(item.session, "session", MAX_LABEL_CHARS),
        speaker=(
            text(item.speaker, "speaker", MAX_LABEL_CHARS) if item.speaker is not None
            else split_speaker(content)[0]
        ),
    )


def note_changes(changes: NoteChanges, max_chars: int) -> NoteChanges:
    if changes.is_empty():
        raise InvalidInput("nothing to update: give at least one field to change")
    return NoteChanges(
        content=None if changes.content is None else text(changes.content, "content", max_chars),
        keywords=None if changes.keywords is None else labels(changes.keywords, "keywords"),
        tags=None if changes.tags is None else labels(changes.tags, "tags"),
        context=None if changes.context is None else text(changes.context, "context", max_chars, allow_empty=True),
        category=None if changes.category is None else text(changes.category, "category", MAX_LABEL_CHARS),
        importance=None if changes.importance is None else unit_interval(changes.importance, "importance"),
        event_time=event_time(changes.event_time),
        reason=text(changes.reason, "reason", 1000),
    )


def json_lines(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSON Lines text; InvalidInput names the first
    line that is not a JSON object."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as err:
            raise InvalidInput(f"line {number} is not JSON: {err}") from None
        if not isinstance(record, dict):
            raise InvalidInput(f"line {number} is not a JSON object")
        yield number, record


def each(items: Iterable[T], check: Callable[[T, int], U], on_invalid: Callable[[int, InvalidInput], None] | None) -> list[U]:
    """Every item checked (`check(item, position)`): the first invalid one raises, or, with `on_invalid`, is
    handed to it with its position and left out (an import that skips what it cannot store)."""
    out: list[U] = []
    for position, item in enumerate(items):
        try:
            out.append(check(item, position))
        except InvalidInput as err:
            if on_invalid is None:
                raise
            on_invalid(position, err)
    return out
