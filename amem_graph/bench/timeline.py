"""`amem-graph bench time`: does the memory answer with the fact that holds now, and `as_of` a moment, with the
fact that held then?

Two histories of evolving facts, each ingested in order with a moment recorded between its steps:
- **BEAM's update questions** (`knowledge_update`, `contradiction_resolution`): each question's evidence names
  the earlier message and the later one that changes it; the later one supersedes the earlier
  (`memory.supersede`: the data's own labels decide, no model). A question about the update is asked now, where
  by default the stale message should no longer rank above the current one, and as of the moment after the
  earlier message was stored, where the earlier message should be found and the later one cannot be.
- **A generated history:** people who move from city to city, each move superseding the last, asked where each
  lives now, as of each earlier moment, and at a time of each move (`valid_at`).

Search latency is timed per call in the same run, on the same questions: plain, with `as_of`, and with `valid_at`.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..api import AgenticMemory
from ..core import validation
from ..ingest import locomo
from ..models import Note, NoteInput
from .timing import percentiles

K = 10
PAUSE_S = 0.003  # between a write and the moment recorded after it: writes are stamped to the millisecond
UPDATES = ("knowledge_update", "contradiction_resolution")
PEOPLE = ("Ada", "Bram", "Chloe", "Dev", "Elif", "Femi", "Greta", "Hugo", "Ines", "Jun", "Kofi", "Lena", "Mateo",
          "Nora", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tara")
CITIES = ("Lisbon", "Oslo", "Nairobi", "Osaka", "Quito", "Tbilisi", "Hanoi", "Perth", "Dakar", "Riga", "Lima",
          "Porto", "Accra", "Kyoto", "Tallinn", "Bergen")


@dataclass(frozen=True)
class Update:
    """A question about a fact that changed: the message that said it first, and the one that changed it."""

    question: str
    kind: str
    old: str  # dia_id
    new: str


def run(memory: AgenticMemory, data: Path | None, *, prefix: str = "time-", people: int = 20, moves: int = 4,
        seed: int = 7, keep: bool = False) -> dict[str, Any]:
    """The BEAM part (when `data` is given) and the generated part, each in tenants of its own."""
    result: dict[str, Any] = {"store": memory.admin.kind, "k": K}
    tenants: list[str] = []
    timings: dict[str, list[float]]
    try:
        if data is not None:
            timings = {"plain": [], "as_of": []}
            result["beam"] = _beam(memory, data, prefix, timings, tenants)
            result["beam"]["search_ms"] = _latency(timings)
        timings = {"plain": [], "as_of": [], "valid_at": []}
        result["generated"] = _generated(memory, f"{prefix}generated", people, moves, seed, timings, tenants)
        result["generated"]["search_ms"] = _latency(timings)
    finally:
        if not keep:
            for tenant in tenants:
                memory.admin.delete_tenant(tenant)
    return result


def _latency(timings: dict[str, list[float]]) -> dict[str, Any]:
    """p50/p95 per kind of search, and each kind's p50 and p95 as a ratio to the plain search's (same questions)."""
    found = {mode: percentiles(samples) for mode, samples in timings.items() if samples}
    if "plain" not in found:  # no question to time
        return found
    plain = found["plain"]
    for mode in found.keys() - {"plain"}:
        found[mode] |= {f"{q}_vs_plain": round(found[mode][q] / plain[q], 2) for q in ("p50", "p95") if plain[q]}
    return found


def _warm(memory: AgenticMemory, query: str, tenant: str) -> None:
    """Untimed, once per tenant and mode: the tenant's speakers are read, and Neo4j plans each statement for a
    time given where it planned it for none (a plan is cached per parameter types), as it does once per server."""
    for options in ({}, {"as_of": validation.now()}, {"valid_at": validation.now()}):
        memory.search(query, k=K, tenant=tenant, **options)


def _moment() -> datetime:
    time.sleep(PAUSE_S)
    at = validation.now()
    time.sleep(PAUSE_S)
    return at


def _timed(timings: list[float], memory: AgenticMemory, query: str, **options: Any) -> list[Note]:
    """The notes a search finds, best first; its milliseconds go to `timings`."""
    began = time.perf_counter()
    hits = memory.search(query, k=K, **options)
    timings.append((time.perf_counter() - began) * 1000)
    return [hit.note for hit in hits]


# -- BEAM -------------------------------------------------------------------------------------------


def updates(conversation: dict[str, Any], dropped: Counter[str]) -> list[Update]:
    """The conversation's update questions whose evidence names two messages: the first and the last in the
    conversation's order are the earlier fact and the one that changed it."""
    order = {str(note.source): i for i, note in enumerate(locomo.turns(conversation))}
    found = []
    for q in locomo.questions(conversation, dropped, set(order)):
        if q.kind not in UPDATES:
            continue
        evidence = sorted(set(q.evidence), key=order.__getitem__)
        if len(evidence) < 2:
            dropped["update questions naming one message"] += 1
            continue
        found.append(Update(q.question, q.kind or "", evidence[0], evidence[-1]))
    return found


def _beam(memory: AgenticMemory, data: Path, prefix: str, timings: dict[str, list[float]],
          tenants: list[str]) -> dict[str, Any]:
    dropped: Counter[str] = Counter()
    rows: list[dict[str, Any]] = []
    for conversation in locomo.load(data):
        asked = updates(conversation, dropped)
        if not asked:
            continue
        tenant = f"{prefix}{conversation['sample_id']}"
        tenants.append(tenant)
        memory.admin.delete_tenant(tenant)
        after = _ingest(memory, tenant, locomo.turns(conversation), asked)
        _warm(memory, asked[0].question, tenant)
        for update in asked:
            rows.append(_ask(memory, tenant, update, after[update.old], timings))
    result = {kind: _rates([r for r in rows if r["kind"] == kind]) for kind in UPDATES}
    result["dropped"] = dict(dropped)
    return result


def _ingest(memory: AgenticMemory, tenant: str, notes: Sequence[NoteInput], asked: Sequence[Update]) -> dict[str, datetime]:
    """Bulk-add the turns in order, in runs that end after each earlier message a question names; after each run,
    record the moment, then supersede each earlier message whose later one is now stored. Returns, for each
    earlier message, the moment after its run (before its later message was stored)."""
    cuts = {u.old for u in asked}
    pending = list(asked)
    held: dict[str, str] = {}  # dia_id → note id
    after: dict[str, datetime] = {}
    run: list[NoteInput] = []
    for i, note in enumerate(notes):
        run.append(note)
        if note.source not in cuts and i < len(notes) - 1:
            continue
        held |= dict(zip((str(n.source) for n in run), memory.add_many(run, tenant=tenant), strict=True))
        run = []
        for update in [u for u in pending if u.new in held and u.old in held]:
            if held[update.old] != held[update.new]:  # two messages of the same text are one note
                memory.supersede(held[update.old], held[update.new], reason=f"a later message: {update.kind}",
                                 tenant=tenant)
            pending.remove(update)
        moment = _moment()
        after |= {u.old: moment for u in asked if u.old in held and u.old not in after}
    return after


def _ask(memory: AgenticMemory, tenant: str, update: Update, before: datetime,
         timings: dict[str, list[float]]) -> dict[str, Any]:
    now = [str(n.source) for n in _timed(timings["plain"], memory, update.question, tenant=tenant)]
    ignored = [str(h.note.source) for h in memory.search(update.question, k=K, tenant=tenant, include_superseded=True)]
    then = [str(n.source) for n in _timed(timings["as_of"], memory, update.question, tenant=tenant, as_of=before)]
    return {
        "kind": update.kind,
        "current_above_stale": _above(now, update.new, update.old),
        "current_above_stale_without_supersession": _above(ignored, update.new, update.old),
        "current_found": update.new in now,
        "stale_found": update.old in now,
        "as_of_earlier_found": update.old in then,
        "as_of_later_absent": update.new not in then,
        "earlier_found_without_supersession": update.old in ignored,
    }


def _above(ranked: Sequence[str], current: str, stale: str) -> bool:
    """The current fact is found, and above the stale one if that is found too."""
    return current in ranked and (stale not in ranked or ranked.index(current) < ranked.index(stale))


def _rates(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"questions": 0}
    keys = [k for k in rows[0] if k != "kind"]
    return {"questions": len(rows), **{k: round(100 * sum(bool(r[k]) for r in rows) / len(rows), 1) for k in keys}}


# -- a generated history -------------------------------------------------------------------------------


def _generated(memory: AgenticMemory, tenant: str, people: int, moves: int, seed: int,
               timings: dict[str, list[float]], tenants: list[str]) -> dict[str, Any]:
    """`people` people (of PEOPLE) each move `moves` times, a year apart; move r of everyone is stored in round r,
    superseding move r-1, and the moment after each round is recorded."""
    tenants.append(tenant)
    memory.admin.delete_tenant(tenant)
    rng = random.Random(seed)
    names = PEOPLE[: max(1, min(people, len(PEOPLE)))]
    homes = {name: rng.sample(CITIES, moves) for name in names}
    ids: dict[tuple[str, int], str] = {}
    moments: list[datetime] = []
    for r in range(moves):
        year = 2020 + r
        rows = [NoteInput(content=f"In {year}, {name} moved to {homes[name][r]}.", speaker=name,
                          event_time=datetime(year, 3, 1, tzinfo=timezone.utc), source=f"{name}:{r}")
                for name in names]
        for name, note_id in zip(names, memory.add_many(rows, tenant=tenant), strict=True):
            ids[(name, r)] = note_id
            if r:
                memory.supersede(ids[(name, r - 1)], note_id, reason=f"{name} moved again", tenant=tenant)
        moments.append(_moment())
    counts: Counter[str] = Counter()
    _warm(memory, "Where does everyone live?", tenant)
    for name in names:
        query = f"Where does {name} live?"
        now = [n.id for n in _timed(timings["plain"], memory, query, tenant=tenant)]
        counts["current_first"] += bool(now) and now[0] == ids[(name, moves - 1)]
        counts["stale_found"] += any(ids[(name, r)] in now for r in range(moves - 1))
        every = [n.id for n in _timed([], memory, query, tenant=tenant, include_superseded=True)]
        counts["current_first_without_supersession"] += bool(every) and every[0] == ids[(name, moves - 1)]
        for r in range(moves):
            then = [n.id for n in _timed(timings["as_of"], memory, query, tenant=tenant, as_of=moments[r])]
            counts["as_of_held_first"] += bool(then) and then[0] == ids[(name, r)]
            counts["as_of_later_absent"] += not any(ids[(name, later)] in then for later in range(r + 1, moves))
            held = [n.id for n in _timed(timings["valid_at"], memory, query, tenant=tenant,
                                         valid_at=datetime(2020 + r, 9, 1, tzinfo=timezone.utc))]
            counts["valid_at_held_first"] += bool(held) and held[0] == ids[(name, r)]
    asked = len(names) * moves
    return {
        "people": len(names), "moves": moves,
        **{k: round(100 * counts[k] / len(names), 1)
           for k in ("current_first", "current_first_without_supersession", "stale_found")},
        **{k: round(100 * counts[k] / asked, 1) for k in ("as_of_held_first", "as_of_later_absent", "valid_at_held_first")},
    }
