"""The transaction primitives of the protocol (base.py) that fold near-twin operations into one call with a
parameter, dispatched here once for both stores to the narrow operations each store's transaction implements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from ..models import NO_FILTER, Link, Note, SearchFilter
from .base import EvolutionRecord, FactWrite, NoteRevision, SegmentWrite


class Narrow(Protocol):
    """What each store's transaction implements beneath the folded primitives."""

    def _note_bm25(self, query: str, k: int, filters: SearchFilter, fields: Mapping[str, float] | None, brief: bool
                   ) -> list[tuple[Note, float]]: ...

    def _nearest_notes(self, vector: Sequence[float], k: int, filters: SearchFilter, brief: bool
                       ) -> list[tuple[Note, float]]: ...

    def _nearest_passages(self, vector: Sequence[float], k: int, filters: SearchFilter, brief: bool
                          ) -> list[tuple[Note, float, int, int]]: ...

    def _link(self, links: Sequence[Link], evolution_id: str | None, invalidate: str | None) -> list[Link]: ...

    def _supersede(self, pairs: Sequence[tuple[str, str, str]], evolution_id: str | None) -> None: ...

    def _revise(self, revisions: Sequence[NoteRevision], evolution_id: str | None) -> list[tuple[str, int]]: ...

    def _record_evolution(self, record: EvolutionRecord) -> None: ...

    def _join_segment(self, page_id: str, segment: SegmentWrite, now: datetime) -> None: ...

    def _write_facts(self, segment_id: str, facts: Sequence[FactWrite], now: datetime) -> None: ...

    def _mark_promoted(self, segment_id: str, derived: Sequence[tuple[str, str]], now: datetime) -> None: ...


class Folded:
    """Mixed into each store's transaction class, before the store's own parts."""

    def search(
        self: Narrow, k: int, *, vector: Sequence[float] | None = None, text: str | None = None,
        passages: bool = False, filters: SearchFilter = NO_FILTER, fields: Mapping[str, float] | None = None,
        brief: bool = False,
    ) -> list[tuple[Note, float, tuple[int, int] | None]]:
        if text is not None:
            return [(note, score, None) for note, score in self._note_bm25(text, k, filters, fields, brief)]
        if vector is None:
            raise ValueError("a search needs a text or a vector")
        if passages:
            return [(note, score, (start, end))
                    for note, score, start, end in self._nearest_passages(vector, k, filters, brief)]
        return [(note, score, None) for note, score in self._nearest_notes(vector, k, filters, brief)]

    def link(
        self: Narrow, links: Sequence[Link], evolution_id: str | None, *, invalidate: str | None = None,
        supersede: Sequence[tuple[str, str, str]] = (),
    ) -> list[Link]:
        made = self._link(links, evolution_id, invalidate)
        if supersede:
            self._supersede(supersede, evolution_id)
        return made

    def revise(self: Narrow, revisions: Sequence[NoteRevision], evolution: EvolutionRecord | None
               ) -> list[tuple[str, int]]:
        kept = self._revise(revisions, evolution.id if evolution else None)
        if evolution is not None:
            self._record_evolution(replace(evolution, revised=tuple(kept)))
        return kept

    def write_segment(
        self: Narrow, segment_id: str, now: datetime, *, joined: tuple[str, SegmentWrite] | None = None,
        derived: Sequence[tuple[str, str]] = (), facts: Sequence[FactWrite] = (),
    ) -> None:
        if joined is not None:
            self._join_segment(joined[0], joined[1], now)
        if facts:
            self._write_facts(segment_id, facts, now)
        if derived:
            self._mark_promoted(segment_id, derived, now)
