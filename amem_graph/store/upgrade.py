"""Upgrades of what older releases wrote, planned once for both stores (each applies the plan in its own way).

Schema 10: a note's neighbourhood (derived text) no longer makes versions. Releases before it kept a NoteVersion,
reason "neighbourhood: note <id> follows in its session", each time a later turn joined a note's neighbourhood. Such a
version changed nothing but that text: it is folded into the state after it, which then holds from where the folded
one began; the others are numbered again from 1, the note's version counts them, and the times the turns joined go
to the note's `neighbourhood_after`, so reads as of a past moment still show the text as it read then."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

BOOKKEEPING = "neighbourhood: "  # how the folded versions' reasons begin


@dataclass(frozen=True)
class Folding:
    """What folding one note's bookkeeping versions changes: the versions to drop (by number), the ones kept with
    their new number and start ((old, new, valid_from)), and the note's version, update time and the times turns
    joined its neighbourhood."""

    note_id: str
    drop: tuple[int, ...]
    kept: tuple[tuple[int, int, datetime | None], ...]
    version: int
    updated_at: datetime | None
    neighbourhood_after: tuple[datetime, ...]


def bookkeeping(reason: str | None) -> bool:
    return (reason or "").startswith(BOOKKEEPING)


def folding(note_id: str, note: Mapping[str, Any], versions: Sequence[Mapping[str, Any]]) -> Folding | None:
    """The folding of one note (`note`: its updated_at and neighbourhood_after; `versions`: each with version,
    reason, valid_from, valid_to); None when it kept no bookkeeping version."""
    ordered = sorted(versions, key=lambda v: int(v["version"]))
    if not any(bookkeeping(v.get("reason")) for v in ordered):
        return None
    drop, kept, joined = [], [], list(note.get("neighbourhood_after") or ())
    start: datetime | None = None  # where the run of folded versions before the next kept state began
    folding_run = False
    for v in ordered:
        if bookkeeping(v.get("reason")):
            drop.append(int(v["version"]))
            if v.get("valid_to") is not None:
                joined.append(v["valid_to"])
            if not folding_run:
                start, folding_run = v.get("valid_from"), True
            continue
        kept.append((int(v["version"]), len(kept) + 1, start if folding_run else v.get("valid_from")))
        folding_run = False
    updated_at = start if folding_run else note.get("updated_at")
    return Folding(note_id, tuple(drop), tuple(kept), len(kept) + 1, updated_at, tuple(sorted(joined)))
