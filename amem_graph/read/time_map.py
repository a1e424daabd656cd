"""The memory along its time, the overview a person reads first: its steps (each session, and for notes in none the
day they were said, else recorded) in the order they happened, with the entities and topics they share as hubs
between them; and the steps of the time slider, over what the conversation says (event time) or over when the
memory was written (recorded time). Pure functions of where notes lie in time and what they mention (`Placed`, as
the store reads them, and the entities as readers show them): `memory.network` reads those."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from ..errors import InvalidInput
from ..models import Entity, _jsonable
from ..store.base import Placed

MAP_STEPS = 30  # the most steps a map draws: beyond, consecutive steps are grouped (a group opens to its steps)
MAP_HUBS = 24  # the most entities a map draws as hubs
THROUGHOUT = 0.8  # an entity in more of a map's steps (of five or more) is everywhere: named, not drawn
SLIDER_STEPS = 200  # the most steps the recorded-time slider has: moments are gathered by a coarser unit beyond
# The units the recorded-time slider gathers its moments by, finest first: each write on its own, then seconds, ...
UNITS = (timedelta(milliseconds=1), timedelta(seconds=1), timedelta(minutes=1), timedelta(hours=1),
         timedelta(days=1), timedelta(days=7), timedelta(days=30), timedelta(days=365))

StepKind = Literal["session", "day", "group"]
Axis = Literal["said", "recorded"]
AXES: tuple[Axis, ...] = ("said", "recorded")


@dataclass(frozen=True)
class TimeStep:
    """A stretch of the memory's time: a session, the day of notes in no session, or a group of consecutive
    steps (`span`: the keys of its first and last) where a map holds more than it draws. `first` and `last` are
    the times of its notes: when they were said, else recorded; `said` whether any has an event time."""

    key: str
    kind: StepKind
    label: str
    first: datetime
    last: datetime
    notes: int
    said: bool
    span: tuple[str, str] | None = None
    steps: int = 1

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self.__dict__)


Run = list[tuple[TimeStep, list[Placed]]]  # steps in order, each with its notes


@dataclass(frozen=True)
class Hub:
    """An entity the map draws, with the notes of each step that mention it."""

    entity: Entity
    steps: tuple[tuple[str, int], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"entity": self.entity.to_dict(), "steps": [list(s) for s in self.steps]}


@dataclass(frozen=True)
class TimeMap:
    """The steps a filter admits, in time order; the hubs between them; the entities in nearly every step
    (`throughout`: a chat's own speakers, say), named rather than drawn; how many notes and distinct entities
    the steps hold."""

    steps: tuple[TimeStep, ...]
    hubs: tuple[Hub, ...]
    throughout: tuple[Entity, ...]
    notes: int
    entities: int

    def to_dict(self) -> dict[str, Any]:
        return {"steps": [s.to_dict() for s in self.steps], "hubs": [h.to_dict() for h in self.hubs],
                "throughout": [e.to_dict() for e in self.throughout], "notes": self.notes, "entities": self.entities}


Shown = Mapping[str, Entity]  # an entity's own key -> the entity readers show for it (merged into, shown at all)


def when(note: Placed) -> datetime:
    """A note's place in time: when it was said, else when it was recorded."""
    return note.event_time or note.created_at


def step_key(note: Placed) -> str:
    return f"session:{note.session}" if note.session else f"day:{when(note).astimezone(UTC).date().isoformat()}"


def in_time_order(notes: Iterable[Placed]) -> list[Placed]:
    """Notes as they happened: by when, then their place in their session, then when recorded."""
    return sorted(notes, key=lambda n: (when(n), n.seq or 0, n.created_at, n.id))


def steps(notes: Sequence[Placed]) -> Run:
    """Each step with its notes, both in time order."""
    members: dict[str, list[Placed]] = defaultdict(list)
    for note in in_time_order(notes):
        members[step_key(note)].append(note)
    out = []
    for key, held in members.items():
        kind: StepKind = "session" if key.startswith("session:") else "day"
        out.append((TimeStep(key, kind, _label(held[0]), when(held[0]), max(map(when, held)), len(held),
                             any(n.event_time is not None for n in held)), held))
    return sorted(out, key=lambda pair: (pair[0].first, pair[0].key))


def time_map(notes: Sequence[Placed], shown: Shown, span: tuple[str, str] | None = None) -> TimeMap:
    """The map of these notes (those a filter admits) and the entities they mention (as `shown`): with `span`,
    only the steps from its first key to its last."""
    runs = _runs(_span(steps(notes), span))
    drawn = [_drawn(run) for run in runs]
    step_of = {note.id: step.key for step, run in zip(drawn, runs, strict=True) for _, held in run for note in held}
    per_entity: dict[str, Counter[str]] = defaultdict(Counter)
    entities: dict[str, Entity] = {}
    for note_id, entity in mentions(notes, shown):
        if note_id in step_of:
            per_entity[entity.key][step_of[note_id]] += 1
            entities[entity.key] = entity
    everywhere = len(drawn) >= 5
    throughout = {k for k, c in per_entity.items() if everywhere and len(c) > THROUGHOUT * len(drawn)}
    order = {step.key: i for i, step in enumerate(drawn)}
    chosen = sorted(
        (k for k, c in per_entity.items() if k not in throughout and (len(c) >= 2 or len(drawn) == 1)),
        key=lambda k: (-len(per_entity[k]), -sum(per_entity[k].values()), entities[k].name))[:MAP_HUBS]
    hubs = tuple(Hub(entities[k], tuple(sorted(per_entity[k].items(), key=lambda s: order[s[0]]))) for k in chosen)
    return TimeMap(tuple(drawn), hubs, tuple(sorted((entities[k] for k in throughout), key=lambda e: e.name)),
                   notes=len(step_of), entities=len(per_entity))


def mentions(notes: Iterable[Placed], shown: Shown) -> Iterable[tuple[str, Entity]]:
    """(note id, entity) for each entity shown that each note mentions, once per note."""
    for note in notes:
        for entity in {e.key: e for key in note.entities if (e := shown.get(key)) is not None}.values():
            yield note.id, entity


def notes_of(notes: Sequence[Placed], key: str) -> list[Placed]:
    """The notes of one step (by its key), in time order; InvalidInput if none of these notes is in it."""
    held = [note for note in in_time_order(notes) if step_key(note) == key]
    if not held and not key.startswith(("session:", "day:")):
        raise InvalidInput(f"step must be a step's key ('session:ID' or 'day:YYYY-MM-DD'), got {key!r}")
    return held


def _label(note: Placed) -> str:
    """A step's name: its session's (with the word "session" where the id lacks it), else its day."""
    if note.session is None:
        return when(note).astimezone(UTC).date().isoformat()
    return note.session if note.session.lower().startswith("session") else f"session {note.session}"


def _span(ordered: Run, span: tuple[str, str] | None) -> Run:
    if span is None:
        return ordered
    keys = [step.key for step, _ in ordered]
    for key in span:
        if key not in keys:
            raise InvalidInput(f"no step {key!r} in this map (it may have changed: open the overview again)")
    first, last = keys.index(span[0]), keys.index(span[1])
    if first > last:
        raise InvalidInput(f"the span's first step {span[0]!r} comes after its last {span[1]!r}")
    return ordered[first:last + 1]


def _runs(ordered: Run) -> list[Run]:
    """The steps a map draws: each on its own, or beyond MAP_STEPS in runs of consecutive steps."""
    size = math.ceil(len(ordered) / MAP_STEPS) if len(ordered) > MAP_STEPS else 1
    return [ordered[i:i + size] for i in range(0, len(ordered), size)]


def _drawn(run: Run) -> TimeStep:
    """A run of steps as the map draws it: its one step, or a group."""
    if len(run) == 1:
        return run[0][0]
    first, last = run[0][0], run[-1][0]
    return TimeStep(f"group:{first.key}..{last.key}", "group", f"{first.label} … {last.label}", first.first,
                    max(s.last for s, _ in run), sum(s.notes for s, _ in run), any(s.said for s, _ in run),
                    span=(first.key, last.key), steps=len(run))


def slider(notes: Sequence[Placed], shown: Shown, axis: Axis) -> dict[str, Any]:
    """The time slider's steps, each with its label, its moment (`at`: said time, the first moment of the step,
    read with `before` the next step's; recorded time, the last moment of the step, read `as_of` it) and the notes
    and distinct entities the memory held by its end. Said time steps by session (or day); recorded time by each
    moment the memory changed, gathered by the finest unit that keeps them within SLIDER_STEPS. `undated`: notes
    the said axis cannot place (no event time); `first`: the recorded axis's first moment (a step ends with its
    last: what is before the first step starts before this)."""
    if axis not in AXES:
        raise InvalidInput(f"axis must be one of {', '.join(AXES)}, got {axis!r}")
    said = [n for n in notes if n.event_time is not None]
    by_note: dict[str, set[str]] = defaultdict(set)
    for note_id, entity in mentions(notes, shown):
        by_note[note_id].add(entity.key)
    if axis == "said":
        runs = [(step.label, step.first, held) for step, held in steps(said)]
    else:
        runs = _recorded(notes)
    out, seen_notes, seen = [], 0, set[str]()
    for label, at, held in runs:
        seen_notes += len(held)
        for note in held:
            seen |= by_note.get(note.id, set())
        out.append({"label": label, "at": at.isoformat(), "notes": seen_notes, "entities": len(seen)})
    first = min(_moments(notes), default=None) if axis == "recorded" else None
    return {"axis": axis, "steps": out, "notes": len(notes), "undated": len(notes) - len(said) if axis == "said" else 0,
            "first": None if first is None else first.isoformat()}


def _recorded(notes: Sequence[Placed]) -> list[tuple[str, datetime, list[Placed]]]:
    """The moments the memory changed (notes recorded, changed, superseded, archived or restored), gathered by the
    finest unit that keeps them within SLIDER_STEPS: (label, the last moment of the unit, the notes recorded in it)."""
    moments = _moments(notes)
    if not moments:
        return []
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    unit = next((u for u in UNITS if len({(m - epoch) // u for m in moments}) <= SLIDER_STEPS), UNITS[-1])
    last: dict[int, datetime] = {}
    for moment in moments:
        bucket = (moment - epoch) // unit
        last[bucket] = max(last.get(bucket, moment), moment)
    recorded: dict[int, list[Placed]] = defaultdict(list)
    for note in notes:
        recorded[(note.created_at - epoch) // unit].append(note)
    return [(_moment_label(last[b], unit), last[b], recorded.get(b, [])) for b in sorted(last)]


def _moments(notes: Sequence[Placed]) -> list[datetime]:
    """Every moment the memory changed these notes: recorded, last changed, superseded, archived or restored."""
    return [m for n in notes for m in (n.created_at, n.updated_at, n.invalid_at, *n.archived_periods) if m]


def _moment_label(at: datetime, unit: timedelta) -> str:
    at = at.astimezone(UTC)
    if unit < timedelta(seconds=1):
        return at.strftime("%Y-%m-%d %H:%M:%S.") + f"{at.microsecond // 1000:03d}"
    if unit < timedelta(minutes=1):
        return at.strftime("%Y-%m-%d %H:%M:%S")
    if unit < timedelta(days=1):
        return at.strftime("%Y-%m-%d %H:%M")
    return at.strftime("%Y-%m-%d")
