"""The memory as it stood at a moment (`as_of`, recorded time): one rule for both stores, from what they keep.

A note's fields at a time are those of the version that held then: each NoteVersion keeps the values a note had
before a change, with the recorded times they held (`valid_from` to `valid_to`); after its last change, the note's
own. A link counts from its first period bound and is valid where its periods say (`Link.valid_at`), and a note
is archived where its `archived_periods` say; a supersession counts from when it was recorded (`Note.invalid_at`,
`Supersession.at`). Usage counters (`retrieval_count`, `last_accessed`) and a link's reason and confidence are
the latest ones: they keep no history. The tiers' records keep their times on themselves: a page when it was
recorded and when it joined its segment, a segment or persona fact when it was made and archived or superseded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..models import Link, Note, NoteHistory, NoteVersion, Page, in_periods
from . import validation


def held_at(note: Note, at: datetime) -> bool:
    """Whether the memory held the note at `at`: it was recorded by then."""
    return note.created_at is not None and note.created_at <= at


def version_at(versions: Sequence[NoteVersion], at: datetime) -> NoteVersion | None:
    """The kept version whose values the note had at `at`, or None when it had the values it has now."""
    return next((v for v in sorted(versions, key=lambda v: v.version) if v.valid_to is not None and at < v.valid_to),
                None)


def note_as_of(note: Note, versions: Sequence[NoteVersion], at: datetime) -> Note | None:
    """The note as the memory held it at `at` (None if it was recorded later), from its kept versions: the
    fields of the version of then, its links as they were then, and superseded only if that was recorded by then."""
    if not held_at(note, at):
        return None
    then = version_at(versions, at)
    held_until = then.valid_to if then is not None else None
    if then is not None:
        note = replace(
            note, content=then.content, content_hash=validation.content_hash(then.content), context=then.context,
            keywords=then.keywords, tags=then.tags, category=then.category,
            importance=note.importance if then.importance is None else float(then.importance),
            event_time=then.event_time, valid_from=then.event_time or note.created_at,
            analysis=then.analysis or note.analysis,  # type: ignore[arg-type]  # a version keeps one of AnalysisKind
            model=then.model if then.analysis is not None else note.model, neighbourhood=then.neighbourhood,
            version=then.version, updated_at=then.valid_from,
        )
    if note.invalid_at is not None and note.invalid_at > at:
        note = replace(note, invalid_at=None, valid_to=None)
    archived = tuple(bound for bound in note.archived_periods if bound <= at)
    return replace(
        note, archived_periods=archived, archived_at=archived[-1] if in_periods(archived, at) else None,
        links=tuple(link for x in note.links if (link := link_as_of(x, at)) is not None),
        neighbourhood=neighbourhood_at(note.neighbourhood, note.neighbourhood_after, at, held_until),
    )


def neighbourhood_at(text: str, after: Sequence[datetime], at: datetime, held_until: datetime | None = None) -> str:
    """A neighbourhood as it read at `at`: without the turns that joined it later (`after`: when each did) and
    before `held_until`, the moment the text was kept (None: now). Turns join at its end, one a line."""
    later = sum(1 for bound in after if bound > at and (held_until is None or bound <= held_until))
    lines = text.split("\n")
    return "\n".join(lines[: max(1, len(lines) - later)]) if later and text else text


def link_as_of(link: Link, at: datetime) -> Link | None:
    """The link as it was at `at`: None before it was first made; invalid from the end of its period then."""
    bounds = tuple(bound for bound in link.periods if bound <= at)
    if not bounds:
        return None
    return replace(link, invalid_at=None if link.valid_at(at) else bounds[-1], periods=bounds)


def tier_held(props: Mapping[str, Any], at: datetime) -> bool:
    """Whether the memory held a page, segment or persona fact at `at`: recorded by then (`created_at`), and
    not archived or superseded by then (`archived_at`, `invalid_at`: the tiers never bring one back).
    cypher/page/*, segment/* and fragments/fact_scope.cypher say the same."""
    created = props.get("created_at")
    return created is not None and created <= at and not any(
        (end := props.get(name)) is not None and end <= at for name in ("archived_at", "invalid_at")
    )


def short_term_at(props: Mapping[str, Any], at: datetime) -> bool:
    """Whether a page was still short-term at `at`: it joined its segment later, or not yet."""
    joined = props.get("joined_at")
    return joined is None or joined > at


def page_as_of(page: Page, at: datetime) -> Page:
    """The page as the tiers held it at `at` (it was recorded by then): short-term, with no segment, until it
    joined one, and not promoted until it was."""
    if short_term_at({"joined_at": page.joined_at}, at):
        return replace(page, tier="stm", segment_id=None, joined_at=None, promoted_at=None)
    if page.promoted_at is not None and page.promoted_at > at:
        return replace(page, promoted_at=None)
    return page


def history_as_of(history: NoteHistory, at: datetime) -> NoteHistory | None:
    """A note's history as it was recorded by `at` (None if the note was recorded later)."""
    note = note_as_of(history.note, history.versions, at)
    if note is None:
        return None
    return NoteHistory(
        note,
        tuple(v for v in history.versions if v.valid_to is not None and v.valid_to <= at),
        tuple(e for e in history.evolutions if e.at is not None and e.at <= at),
        tuple(s for s in history.superseded_by if s.at is not None and s.at <= at),
    )


# -- attachments


def attached_at_time(
    current: tuple[str, datetime], earlier: Sequence[tuple[str, datetime]], at: datetime,
) -> tuple[str, datetime] | None:
    """The object an adapter's attachment held at `at`, with when it was set: the one set last by then (None
    before the oldest one kept was set). `current` is the object it holds now and `earlier` those it held
    before, each with when it was set, oldest first; '' in `earlier` is an object put again unchanged, which
    is the one set after it (cypher/attached/set.cypher keeps it so)."""
    sets = [*earlier, current]
    held = [i for i, (_, set_at) in enumerate(sets) if set_at <= at]
    if not held:
        return None
    return next(value for value, _ in sets[held[-1]:] if value), sets[held[-1]][1]
