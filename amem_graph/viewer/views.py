"""What the viewer's page asks for, as JSON-ready dicts, read through the memory's public API only: the tenant at a
glance, the network (an overview or a neighbourhood), one note with its versions and evolutions, a search with
why each hit was found, entities, and the MemoryOS tiers. Nothing here writes, or counts a read as a use."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from itertools import pairwise
from typing import Any

from ..api import AgenticMemory
from ..core import validation
from ..errors import InvalidInput
from ..models import EVERY_NOTE, Note, NoteHistory, NoteVersion, SearchFilter, SearchHit
from ..read import explain
from ..read.network import state
from ..read.retrieval import MODES

Params = Mapping[str, Sequence[str]]  # a query string, parsed: each name with its values

NOTES_DRAWN = 60  # a memory (or filter) with no more notes is drawn note by note, not as a map of its steps
SUGGESTED_FROM = 1_000  # the newest notes whose tags, speakers and sessions the filters suggest
MAX_SEARCH_K = 50
_WORDS = re.compile(r"\s+|[^\s]+")


def one(params: Params, name: str, default: str | None = None) -> str | None:
    values = [v for v in params.get(name, ()) if v != ""]
    if len(values) > 1:
        raise InvalidInput(f"{name} is given {len(values)} times; give it once")
    return values[0] if values else default


def number(params: Params, name: str, default: int, low: int, high: int) -> int:
    value = one(params, name)
    if value is None:
        return default
    try:
        parsed = int(value)
    except ValueError:
        raise InvalidInput(f"{name} must be an integer, got {value!r}") from None
    if not low <= parsed <= high:
        raise InvalidInput(f"{name} must be from {low} to {high}, got {parsed}")
    return parsed


def flag(params: Params, name: str) -> bool:
    value = one(params, name, "0")
    if value not in ("0", "1"):
        raise InvalidInput(f"{name} must be 0 or 1, got {value!r}")
    return value == "1"


def moment(params: Params, name: str) -> datetime | None:
    return validation.event_time(one(params, name), name)


TENANTS_SHOWN = 50  # the other tenants a page on an empty tenant names


class Views:
    """The viewer's reads over one memory (its tenant only: no view takes a tenant)."""

    def __init__(self, memory: AgenticMemory) -> None:
        self.memory = memory

    def summary(self) -> dict[str, Any]:
        """The tenant, its store, its counts, its analysis queue (notes waiting for the model, the oldest's wait),
        and the span of time the slider covers."""
        memory = self.memory
        counts = memory.stats(tenant=memory.tenant).labels
        held = counts.get("Note", 0)
        oldest = memory.list(limit=1, offset=max(held - 1, 0), include_superseded=True, include_archived=True)
        pages = memory.tiers.pages(limit=1)
        # A tenant that holds nothing is most often a typo (or an agent that has not written yet): the page names
        # the tenants that hold something.
        others = [] if counts else [t for t in memory.admin.tenants(near=memory.tenant) if t != memory.tenant][:TENANTS_SHOWN]
        return {
            "tenant": memory.tenant, "store": memory.admin.kind, "counts": counts, "empty": not counts,
            "tenants": others, "queue": memory.queue(tenant=memory.tenant),
            "first": _iso(oldest[0].created_at if oldest else pages[0].created_at if pages else None),
            "now": _iso(validation.now()),
        }

    def timeline(self, params: Params) -> dict[str, Any]:
        """The time slider's steps over `axis`: "said" (a step per session, else day, of what the conversation
        says; read with `before` the next step's moment) or "recorded" (the moments the memory changed, gathered
        by second, minute, ... as their number needs; read `as_of` the step's moment)."""
        axis = one(params, "axis", "said")
        return self.memory.network.slider(axis)  # type: ignore[arg-type]  # slider names the axes it knows

    def suggest(self) -> dict[str, Any]:
        """What the filters suggest: the tags, speakers and sessions of the newest notes, the most mentioned
        entities."""
        newest = self.memory.list(limit=SUGGESTED_FROM, include_superseded=True, include_archived=True)
        return {
            "tags": _common(tag for note in newest for tag in note.tags),
            "speakers": _common(note.speaker for note in newest if note.speaker),
            "sessions": _common(note.session for note in newest if note.session),
            "entities": [e.name for e in self.memory.entities.list(limit=200)],
        }

    def network(self, params: Params) -> dict[str, Any]:
        """What the graph draws (`kind`): with `around`, a note's neighbourhood; with `step`, one step's notes;
        else the memory along its time (a `map`, with `first` and `last` only those steps), or its notes themselves
        where they are few enough to draw."""
        at, since = moment(params, "as_of"), moment(params, "since")
        network = self.memory.network
        centre = one(params, "around")
        if centre is not None:
            graph = network.around(centre, hops=number(params, "hops", 1, 1, 2),
                                   limit=number(params, "limit", 80, 1, 400), as_of=at, since=since)
            return {"kind": "notes", **graph.to_dict()}
        filters = replace(
            EVERY_NOTE if flag(params, "all") else SearchFilter(),
            after=moment(params, "after"), before=moment(params, "before"),
            tags=_labels(params, "tag"), speakers=_labels(params, "speaker"), sessions=_labels(params, "session"),
            as_of=at,
        )
        entity, limit = one(params, "entity"), number(params, "limit", 150, 1, 400)
        step = one(params, "step")
        if step is not None:
            graph = network.step(step, filters=filters, entity=entity, limit=limit, since=since)
            return {"kind": "notes", **graph.to_dict()}
        first, last = one(params, "first"), one(params, "last")
        if (first is None) != (last is None):
            raise InvalidInput("first and last (a span of steps) are given together")
        span = (first, last) if first is not None and last is not None else None
        mapped = network.along_time(filters=filters, entity=entity, span=span)
        if span is None and mapped.notes <= NOTES_DRAWN:
            graph = network.overview(filters=filters, entity=entity, limit=min(limit, NOTES_DRAWN), since=since)
            return {"kind": "notes", **graph.to_dict()}
        return {"kind": "map", **mapped.to_dict()}

    def note(self, note_id: str, params: Params) -> dict[str, Any]:
        """A note as of a moment: its fields, state, versions with what each change did, the evolutions that
        changed it, what superseded it, its links with the notes at their other ends, its entities and passages."""
        memory = self.memory
        at = moment(params, "as_of")
        history = memory.history(note_id, as_of=at)
        note = history.note
        ends = [link.other(note.id) for link in note.links] + [s.newer_id for s in history.superseded_by]
        others = {n.note.id: n for n in memory.network.notes(ends, as_of=at)}
        return {
            "note": _note(note, neighbourhood=True), "state": state(note),
            "changes": _changes(history),
            "evolutions": [_evolution(e) for e in history.evolutions],
            "superseded_by": [s.__dict__ | {"at": _iso(s.at), "newer": _brief(others.get(s.newer_id))}
                              for s in history.superseded_by],
            "links": [
                {"type": link.type, "reason": link.reason, "confidence": link.confidence,
                 "outgoing": link.source_id == note.id, "valid": link.invalid_at is None,
                 "created_at": _iso(link.created_at), "other": _brief(others.get(link.other(note.id))),
                 "other_id": link.other(note.id)}
                for link in note.links
            ],
            "entities": [{"name": e.name, "kind": e.kind, "key": e.key, "confidence": c}
                         for e, c in memory.entities.of_note(note.id)],
            "passages": [{"start": s, "end": e} for s, e in memory.embedder.passage_spans(note.content)],
        }

    def search(self, params: Params) -> dict[str, Any]:
        """`memory.search` with every hit's explanation, and the graph of the paths that reached them."""
        query = one(params, "q")
        if query is None:
            raise InvalidInput("q (the query) is required")
        mode = one(params, "mode", "hybrid")
        if mode not in MODES:
            raise InvalidInput(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        at = moment(params, "as_of")
        hits = self.memory.search(
            query, k=number(params, "k", 10, 1, MAX_SEARCH_K), hops=number(params, "hops", 2, 0, 3),
            mode=mode, as_of=at, include_superseded=flag(params, "all"), include_archived=flag(params, "all"),
            count_use=False,
        )
        found = {hit.note.id for hit in hits}
        # One read: the notes on the paths, and the hits with their links (so that the graph shows how the hits hang
        # together, not a grid of dots).
        read = self.memory.network.notes(
            [*found, *(step.from_id for hit in hits for step in hit.path if step.from_id not in found)], as_of=at,
            links=True)
        between = [n for n in read if n.note.id not in found]
        among = {(link.source_id, link.target_id, link.type): link for held in read if held.note.id in found
                 for link in held.note.links if link.source_id in found and link.target_id in found}
        return {"query": query, "as_of": _iso(at),
                "hits": [_hit(rank, hit, query) for rank, hit in enumerate(hits, 1)],
                "links": [{"source": s, "target": t, "type": kind, "reason": link.reason}
                          for (s, t, kind), link in sorted(among.items())],
                "path_notes": [_note(n.note) | {"state": n.state} for n in between]}

    def entities(self, params: Params) -> dict[str, Any]:
        at = moment(params, "as_of")
        return {"entities": [e.to_dict() for e in self.memory.entities.list(limit=500, as_of=at)]}

    def entity(self, name: str, params: Params) -> dict[str, Any]:
        """An entity's profile, its mentions per month and its merges, as of a moment."""
        at = moment(params, "as_of")
        profile = self.memory.entities.profile(name, limit=500, as_of=at)
        months = Counter(
            when.strftime("%Y-%m") for note in profile.notes if (when := note.event_time or note.created_at)
        )
        return {
            "entity": profile.entity.to_dict(),
            "notes": [_note(n) | {"state": state(n)} for n in profile.notes],
            "related": [{"entity": e.to_dict(), "notes": count} for e, count in profile.related],
            "months": sorted(months.items()),
            "merges": [m.to_dict() for m in self.memory.entities.merges(name, as_of=at)],
        }

    def tiers(self) -> dict[str, Any]:
        """The MemoryOS tiers as they are: the latest session's short-term pages, segments with their heat now,
        and the persona."""
        tiers = self.memory.tiers
        return {
            "sessions": tiers.session_page_counts(),
            "short_term": [p.to_dict() for p in tiers.stm()],
            "segments": [s.to_dict() for s in tiers.segments(include_archived=True, limit=200)],
            "persona": [f.to_dict() for f in self.memory.tiers.persona()],
        }


def _labels(params: Params, name: str) -> tuple[str, ...]:
    return validation.labels([v for v in params.get(name, ()) if v != ""], f"{name}s")


def _common(values: Any, most: int = 200) -> list[str]:
    return [value for value, _ in Counter(values).most_common(most)]


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()


def _note(note: Note, *, neighbourhood: bool = False) -> dict[str, Any]:
    """A note for the page: its links come apart, and the turns around it only where the note is opened."""
    data = note.to_dict()
    data.pop("links")
    if not neighbourhood:
        data.pop("neighbourhood")
    return data


def _brief(found: Any) -> dict[str, Any] | None:
    """The note at a link's other end as the neighbourhood read it (None: beyond what it holds)."""
    if found is None:
        return None
    note: Note = found.note
    return {"id": note.id, "content": note.content, "speaker": note.speaker, "state": found.state}


def _hit(rank: int, hit: SearchHit, query: str) -> dict[str, Any]:
    """A hit with why it was found (`explain`): the query's words in it, or in the turns around it (then sent
    along), the part of a long note to show, and the label the CLI prints."""
    found = explain.match(query, hit)
    data = hit.to_dict()
    data["note"] = _note(hit.note, neighbourhood=bool(found.around)) | {"state": state(hit.note)}
    data["rank"] = rank
    data["seed"] = hit.path[0].from_id if hit.path else None
    data["match"] = found.to_dict()
    data["found"] = explain.label(hit, found)
    return data


def _evolution(evolution: Any) -> dict[str, Any]:
    return {"id": evolution.id, "at": _iso(evolution.at), "trigger_note_id": evolution.trigger_note_id,
            "analysis": evolution.analysis, "model": evolution.model, "decision": evolution.decision,
            "revised": [list(r) for r in evolution.revised]}


def _changes(history: NoteHistory) -> list[dict[str, Any]]:
    """Each change to the note, oldest first: when, why, by which evolution, and what it did to each field (a
    word diff of the texts; the labels added and removed)."""
    states: list[NoteVersion | Note] = [*sorted(history.versions, key=lambda v: v.version), history.note]
    out = []
    for before, after in pairwise(states):
        assert isinstance(before, NoteVersion)  # every state but the last is a kept version
        out.append({
            "version": before.version, "to_version": after.version, "at": _iso(before.valid_to),
            "reason": before.reason, "evolution_id": before.evolution_id,
            "content": words_diff(before.content, after.content),
            "context": words_diff(before.context or "", after.context or ""),
            "keywords": _labels_diff(before.keywords, after.keywords), "tags": _labels_diff(before.tags, after.tags),
            "before": {"content": before.content, "context": before.context, "keywords": list(before.keywords),
                       "tags": list(before.tags)},
        })
    return out


def words_diff(before: str, after: str) -> list[list[str]]:
    """A word diff as [op, text] pairs: "=" kept, "-" removed, "+" added (whitespace kept with the words)."""
    old, new = _WORDS.findall(before), _WORDS.findall(after)
    out: list[list[str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(["=", "".join(old[i1:i2])])
            continue
        if i2 > i1:
            out.append(["-", "".join(old[i1:i2])])
        if j2 > j1:
            out.append(["+", "".join(new[j1:j2])])
    return out


def _labels_diff(before: Sequence[str], after: Sequence[str]) -> dict[str, list[str]]:
    return {"added": [x for x in after if x not in before], "removed": [x for x in before if x not in after]}
