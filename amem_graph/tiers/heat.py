"""MemoryOS heat, the one place it is computed: a segment's counters and how long ago it was touched decide
how hot it is now, which segments are promoted, and which are archived past the capacity; a note's, which notes
a retention policy archives."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from ..models import Segment


def heat(segment: Segment, params: Mapping[str, float], now: datetime) -> float:
    """A segment's heat: its visits, the pages joined since its last promotion, and when it was last touched.
    Computed when read, so a segment nobody touches cools."""
    return heat_of(segment.visits, segment.interaction_len, segment.last_access, params, now)


def heat_of(visits: float, interaction: float, last: datetime | None, params: Mapping[str, float], now: datetime) -> float:
    """alpha·visits + beta·interaction + gamma·exp(−Δt/mu), Δt in seconds since `last` (never negative). A note
    weighs its recalls and its valid links (retention.py) as a segment its visits and pages."""
    age = (now - last).total_seconds() if last is not None and now > last else 0.0
    return params["alpha"] * visits + params["beta"] * interaction + params["gamma"] * math.exp(-age / params["mu"])


def heated(
    rows: Sequence[tuple[Segment, float | None]], params: Mapping[str, float], now: datetime
) -> list[tuple[Segment, float | None]]:
    """Each segment with its heat at `now` filled in."""
    return [(replace(segment, heat=heat(segment, params, now)), cosine) for segment, cosine in rows]


def hottest(segments: Sequence[Segment]) -> list[Segment]:
    """Hottest first; of equal heat, the one touched last, then the newest."""
    def key(s: Segment) -> tuple[float, float, float]:
        touched = s.last_access or s.created_at
        return (s.heat, touched.timestamp() if touched else 0.0, s.created_at.timestamp() if s.created_at else 0.0)

    return sorted(segments, key=key, reverse=True)


def coldest_past(segments: Sequence[Segment], capacity: int) -> list[Segment]:
    """The active segments past `capacity`, the coldest of them: what archiving takes out of the active set."""
    return hottest([s for s in segments if s.archived_at is None])[capacity:]
