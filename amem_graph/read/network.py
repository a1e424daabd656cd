"""A tenant's knowledge network as a graph to look at, never all of it at once: an overview (the newest notes a
filter admits, with the links among them, their order in their sessions and the entities they mention) or one
note's neighbourhood (the notes search's expansion reaches from it). Either reads the memory as of a moment and
can mark what changed since an earlier one. `memory.network` serves the viewer (`amem-graph view`) and notebooks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import pairwise
from typing import Any, Literal

from ..core import timeline, validation
from ..core.tuning import EXPANSION_TYPES
from ..entities.lookup import Entities, mentions_of, merged_into
from ..entities.topics import shown
from ..errors import InvalidInput, NoteNotFound
from ..models import EVERY_NOTE, NO_FILTER, Entity, Link, Note, NoteVersion, SearchFilter, _jsonable
from ..store import MemoryStore
from ..store.base import Placed, Tx
from .time_map import Axis, TimeMap, notes_of, slider, time_map

MAX_NOTES = 1_000  # the most notes one graph holds: a page draws a few hundred well, thousands badly
MAX_AROUND_HOPS = 2  # a neighbourhood's radius; three hops from a hub reaches most of a tenant

State = Literal["current", "superseded", "archived"]
Change = Literal["added", "changed", "superseded", "archived", "restored"]


@dataclass(frozen=True)
class GraphNote:
    """A note as the graph shows it: the note as of the graph's moment, whether it was current, superseded or
    archived then, what happened to it between `since` and then, and (in a neighbourhood) how many steps
    from the centre it lies."""

    note: Note
    state: State
    change: Change | None = None
    hops: int | None = None

    def to_dict(self) -> dict[str, Any]:
        note = self.note.to_dict()
        for bulky in ("links", "neighbourhood"):  # the graph's links say the first; the note's own view, the second
            note.pop(bulky)
        return {"note": note, "state": self.state, "change": self.change, "hops": self.hops}


@dataclass(frozen=True)
class NoteGraph:
    """Notes, the valid links among them and those that ended after `since` (each with its change since `since`:
    "added", "ended" or None), the
    session order between them ((earlier id, later id) of notes next to each other among those shown), and the
    entities each mentions ((note id, entity): an alias as the entity it was merged into)."""

    notes: tuple[GraphNote, ...]
    links: tuple[tuple[Link, str | None], ...]
    session_steps: tuple[tuple[str, str], ...]
    mentions: tuple[tuple[str, Entity], ...]
    more: bool  # more notes qualify than the graph holds
    as_of: datetime | None = None
    since: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "notes": [n.to_dict() for n in self.notes],
            "links": [{**_jsonable(link), "change": change} for link, change in self.links],
            "session_steps": [list(step) for step in self.session_steps],
            "entities": {entity.key: entity.to_dict() for _, entity in self.mentions},
            "mentions": [[note_id, entity.key] for note_id, entity in self.mentions],
            "more": self.more, "as_of": _jsonable(self.as_of), "since": _jsonable(self.since),
        }


class Network:
    """The graph views of one tenant's memory (reads only: nothing is counted as used)."""

    def __init__(self, store: MemoryStore, tenant: str, entities: Entities) -> None:
        self._store = store
        self._tenant = tenant
        self._entities = entities

    def overview(
        self, *, filters: SearchFilter = NO_FILTER, entity: str | None = None, limit: int = 200,
        since: datetime | str | None = None, tenant: str | None = None,
    ) -> NoteGraph:
        """The newest `limit` notes that `filters` admits (by default the current ones; as of `filters.as_of`, which
        also says what the notes held then), and with `entity` only those that mention it (or an entity merged into
        it)."""
        tenant = self._of(tenant)
        limit = _limit(limit)
        at, since = filters.as_of, _since(since, filters.as_of)
        key = self._entities.get(entity, tenant=tenant, as_of=at).key if entity else None

        def read(tx: Tx) -> NoteGraph:
            if key is None:
                ids = [n.id for n in tx.notes(filters=filters, limit=limit + 1)]
            else:
                ids = [n.id for _, n, _ in tx.mentioning([key], limit + 1, filters=filters)]
            return _graph(tx, ids[:limit], filters, since, more=len(ids) > limit)

        return self._store.read(tenant, read)

    def along_time(
        self, *, filters: SearchFilter = NO_FILTER, entity: str | None = None, span: tuple[str, str] | None = None,
        tenant: str | None = None,
    ) -> TimeMap:
        """The memory along its time: the steps (sessions, else days) of the notes `filters` admits (and with
        `entity` that mention it, or an entity merged into it), in the order they happened, with the entities and
        topics between them; with `span` ((first step's key, last step's key), as a group of the map gives), only
        those steps. A map of a large memory groups consecutive steps; `step` opens one step to its notes."""
        placed, shown = self._placed(self._of(tenant), filters, entity)
        return time_map(placed, shown, span)

    def step(
        self, key: str, *, filters: SearchFilter = NO_FILTER, entity: str | None = None, limit: int = 200,
        since: datetime | str | None = None, tenant: str | None = None,
    ) -> NoteGraph:
        """The notes of one step of `along_time` (its key: 'session:ID' or 'day:YYYY-MM-DD'), the first `limit`
        in the order they happened, as a graph (`overview`'s)."""
        tenant = self._of(tenant)
        limit = _limit(limit)
        since = _since(since, filters.as_of)
        if not isinstance(key, str):
            raise InvalidInput(f"step must be a step's key, got {key!r}")
        if key.startswith("session:") and not filters.sessions:  # read that session's notes only
            filters = replace(filters, sessions=(key.removeprefix("session:"),))
        placed, _ = self._placed(tenant, filters, entity)
        ids = [note.id for note in notes_of(placed, key)]
        return self._store.read(tenant, lambda tx: _graph(tx, ids[:limit], filters, since, more=len(ids) > limit))

    def slider(self, axis: Axis = "said", *, tenant: str | None = None) -> dict[str, Any]:
        """The time slider's steps over every note the memory holds or held (`time_map.slider`)."""
        placed, shown = self._placed(self._of(tenant), EVERY_NOTE, None)
        return slider(placed, shown, axis)

    def _placed(self, tenant: str, filters: SearchFilter, entity: str | None) -> tuple[list[Placed], dict[str, Entity]]:
        """Where the notes `filters` admits lie in time, and the entities they mention as readers show them."""
        key = self._entities.get(entity, tenant=tenant, as_of=filters.as_of).key if entity else None

        def read(tx: Tx) -> tuple[list[Placed], dict[str, Entity]]:
            placed = tx.placed(filters)
            into = merged_into(tx, {k for note in placed for k in note.entities})
            if key is not None:
                placed = [note for note in placed if any(into[k].key == key for k in note.entities if k in into)]
            return placed, {k: e for k, e in into.items() if shown(e)}

        return self._store.read(tenant, read)

    def around(
        self, note_id: str, *, hops: int = 1, limit: int = 100, as_of: datetime | str | None = None,
        since: datetime | str | None = None, tenant: str | None = None,
    ) -> NoteGraph:
        """A note and the `limit` notes nearest it: those up to `hops` links or session steps away over the links
        valid then, the nearest and most confident first, as search's expansion walks them (superseded and archived
        notes too, marked); each note's `hops` are the steps of the strongest path that reached it. NoteNotFound if
        the memory did not hold the note then."""
        tenant = self._of(tenant)
        note_id = validation.note_id(note_id)
        if isinstance(hops, bool) or not isinstance(hops, int) or not 1 <= hops <= MAX_AROUND_HOPS:
            raise InvalidInput(f"hops must be an integer from 1 to {MAX_AROUND_HOPS}, got {hops!r}")
        limit = _limit(limit)
        at = validation.event_time(as_of, "as_of")
        since = _since(since, at)
        shown = replace(EVERY_NOTE, as_of=at)

        def read(tx: Tx) -> NoteGraph | None:
            # The centre and `limit` notes, and one more to know whether more lie beyond.
            rows = tx.expand({note_id: 1.0}, [note_id], hops=hops, decay=0.5, limit=limit + 2, deep_seeds=1,
                             weights=dict.fromkeys(EXPANSION_TYPES, 1.0), filters=shown)
            if not any(note.id == note_id for note, _, _ in rows):
                return None
            steps = {note.id: len(path) for note, _, path in rows}
            graph = _graph(tx, list(steps)[: limit + 1], shown, since, more=len(rows) > limit + 1, hops=steps)
            return graph if any(n.note.id == note_id for n in graph.notes) else None

        graph = self._store.read(tenant, read)
        if graph is None:
            when = "" if at is None else f" as of {at.isoformat()}"
            raise NoteNotFound(f"no note {note_id!r} in tenant {tenant!r}{when}")
        return graph

    def notes(
        self, note_ids: Sequence[str], *, as_of: datetime | str | None = None, tenant: str | None = None,
        links: bool = False,
    ) -> list[GraphNote]:
        """These notes, in the order asked, as the memory held them at `as_of` (those it held then), each with its
        state (and, with `links`, its links as they were then): one read for the notes at the ends of a note's
        links, on a search's paths, or a search's hits."""
        tenant = self._of(tenant)
        ids = list(dict.fromkeys(validation.note_id(note_id) for note_id in note_ids))
        at = validation.event_time(as_of, "as_of")

        def read(tx: Tx) -> list[Note]:
            found = tx.notes(ids=ids, links=links) if ids else []
            if at is None:
                return found
            kept = tx.history(ids).versions
            return [then for note in found if (then := timeline.note_as_of(note, kept.get(note.id, ()), at)) is not None]

        return [GraphNote(note, state(note)) for note in self._store.read(tenant, read)]

    def _of(self, tenant: str | None) -> str:
        return self._tenant if tenant is None else validation.tenant(tenant)


def state(note: Note) -> State:
    """Whether a note (as of some moment) was archived, superseded or current."""
    if note.archived_at is not None:
        return "archived"
    return "superseded" if note.invalid_at is not None else "current"


def change(note: Note, versions: Sequence[NoteVersion], since: datetime, until: datetime | None) -> Change | None:
    """What happened to a note (held at `until`, None: now) after `since`: added, superseded, archived or
    restored, else changed (a version ended then), else nothing."""
    def between(at: datetime | None) -> bool:
        return at is not None and since < at and (until is None or at <= until)

    if between(note.created_at):
        return "added"
    if between(note.invalid_at):
        return "superseded"
    bounds = [bound for bound in note.archived_periods if between(bound)]
    if bounds:
        return "archived" if note.archived_at is not None else "restored"
    return "changed" if any(between(v.valid_to) for v in versions) else None


def link_change(link: Link, since: datetime) -> str | None:
    """Whether a link (as of the graph's moment: valid then if `invalid_at` is None) was made ("added") or ended
    ("ended") since `since`: valid at one moment and not at the other."""
    valid_then, valid_now = link.valid_at(since), link.invalid_at is None
    if valid_then == valid_now:
        return None
    return "added" if valid_now else "ended"


def _graph(
    tx: Tx, ids: Sequence[str], filters: SearchFilter, since: datetime | None, *, more: bool,
    hops: dict[str, int] | None = None,
) -> NoteGraph:
    """The notes of `ids` as of `filters.as_of`, the ones it still admits then, with their links, session order
    and entities."""
    at = filters.as_of
    notes = tx.notes(ids=ids, links=True)
    versions = tx.history(ids).versions if at is not None or since is not None else {}
    if at is not None:
        then = (timeline.note_as_of(note, versions.get(note.id, ()), at) for note in notes)
        notes = [note for note in then if note is not None and filters.admits(vars(note))]
    shown = {note.id for note in notes}
    links: dict[tuple[str, str, str], tuple[Link, str | None]] = {}
    for note in notes:
        for link in note.links:
            if link.source_id not in shown or link.target_id not in shown:
                continue
            changed = link_change(link, since) if since is not None else None
            if link.invalid_at is None or changed == "ended":  # a link ended since `since` is shown, marked
                links[(link.source_id, link.target_id, link.type)] = (link, changed)
    return NoteGraph(
        notes=tuple(GraphNote(
            note, state(note), change(note, versions.get(note.id, ()), since, at) if since is not None else None,
            None if hops is None else hops.get(note.id),
        ) for note in notes),
        links=tuple(links.values()),
        session_steps=_session_steps(notes),
        mentions=tuple((note_id, entity) for note_id, entity, _ in mentions_of(tx, sorted(shown))),
        more=more, as_of=at, since=since,
    )


def _session_steps(notes: Sequence[Note]) -> tuple[tuple[str, str], ...]:
    by_session: dict[str, list[Note]] = {}
    for note in notes:
        if note.session is not None and note.seq is not None:
            by_session.setdefault(note.session, []).append(note)
    steps = []
    for members in by_session.values():
        members.sort(key=lambda n: n.seq or 0)
        steps += [(a.id, b.id) for a, b in pairwise(members)]
    return tuple(steps)


def _limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_NOTES:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_NOTES}, got {limit!r}")
    return limit


def _since(since: datetime | str | None, at: datetime | None) -> datetime | None:
    moment = validation.event_time(since, "since")
    if moment is not None and at is not None and moment >= at:
        raise InvalidInput(f"since ({moment.isoformat()}) must be earlier than as_of ({at.isoformat()})")
    return moment
