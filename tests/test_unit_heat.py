"""Store-free unit tests of MemoryOS heat (amem_graph/tiers/heat.py): alpha·visits + beta·interaction_len +
gamma·exp(−Δt/mu), worked out by hand, and the orders it gives promotion and archiving."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from amem_graph.models import Segment
from amem_graph.settings import TierSettings
from amem_graph.tiers.heat import coldest_past, heat, hottest

pytestmark = pytest.mark.embedded

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


def segment(segment_id: str, *, visits: int = 0, joined: int = 0, touched: float | None = 0.0, heat_: float = 0.0,
            archived: bool = False, created: float = 0.0) -> Segment:
    """A segment last touched `touched` seconds before NOW (None: never)."""
    return Segment(id=segment_id, tenant="t", summary="", keywords=(), pages=1, visits=visits, interaction_len=joined,
                   last_access=None if touched is None else NOW - timedelta(seconds=touched), heat=heat_,
                   created_at=NOW - timedelta(seconds=created), archived_at=NOW if archived else None)


def test_heat_is_counters_plus_a_recency_that_decays() -> None:
    params = TierSettings(heat_alpha=1.0, heat_beta=0.5, heat_gamma=2.0, heat_mu=3600.0).heat_params()
    assert heat(segment("s", visits=2, joined=3, touched=0), params, NOW) == pytest.approx(2 + 1.5 + 2.0)
    assert heat(segment("s", visits=2, joined=3, touched=3600), params, NOW) == pytest.approx(3.5 + 2 * math.exp(-1))
    assert heat(segment("s", touched=-60), params, NOW) == pytest.approx(2.0)  # touched "later" than now: no negative age
    assert heat(segment("s", touched=None), params, NOW) == pytest.approx(2.0)
    default = TierSettings().heat_params()  # mu 1e7 s: a day costs little
    assert heat(segment("s", visits=1, touched=86_400), default, NOW) == pytest.approx(1 + math.exp(-86_400 / 1e7))


def test_hottest_first_and_the_coldest_past_the_capacity() -> None:
    hot, warm_recent, warm_old, cold = (segment("hot", heat_=5.0), segment("recent", heat_=2.0, touched=10),
                                        segment("old", heat_=2.0, touched=500), segment("cold", heat_=0.5))
    assert [s.id for s in hottest([cold, warm_old, hot, warm_recent])] == ["hot", "recent", "old", "cold"]
    archived = segment("gone", heat_=0.1, archived=True)
    assert [s.id for s in coldest_past([cold, archived, hot, warm_old, warm_recent], 2)] == ["old", "cold"]
    assert coldest_past([hot, cold], 2) == []
